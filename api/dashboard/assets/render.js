// Viewcount dashboard: drawing. Tables, tiles and charts from stats API
// answers. Text goes in with textContent only, never as markup: page paths,
// referrers and UTM tags are whatever visitors sent.
'use strict';
window.vcRender = (() => {
  const nf = new Intl.NumberFormat('en-US');
  const fmt = (n) => nf.format(n);
  const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });
  let regions = null;
  try { regions = new Intl.DisplayNames(['en'], { type: 'region' }); } catch (_) { /* old browser: codes only */ }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  }

  // label turns a stored value into what a person reads: countries get their name.
  function label(by, v) {
    if (by === 'country' && regions && /^[A-Z]{2}$/.test(v)) {
      try { return v + ' · ' + regions.of(v); } catch (_) { return v; }
    }
    return v;
  }

  // byCount orders [name, n] pairs by n, largest first, then by name.
  const byCount = (a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

  function emptyRow(tbody, cols, text) {
    const tr = el('tr', 'empty');
    const td = el('td', null, text);
    td.colSpan = cols;
    tr.append(td);
    tbody.append(tr);
  }

  // Figures as a person reads them. A figure the API has no measure of
  // (null: no visit, no engagement report) is a dash, and its title says why.
  const NONE = '\u2014';
  const pad = (n) => String(n).padStart(2, '0');
  function dur(x) {
    const s = Math.round(x);
    if (s < 60) return s + 's';
    const m = Math.floor(s / 60);
    return m < 60 ? `${m}m ${pad(s % 60)}s` : `${Math.floor(m / 60)}h ${pad(m % 60)}m`;
  }
  const rate = (x) => (Math.round(x * 1000) / 10).toFixed(1) + '%';
  const pct = (x) => Math.round(x) + '%';
  const COL = { time_on_page: dur, visit_duration: dur, bounce_rate: rate, scroll_depth: pct };
  const cell = (k, v) => (v == null ? NONE : (COL[k] || fmt)(v));

  // panel fills one breakdown table: a column per cols key (views and
  // uniques unless told), a bar as long as the first one's share;
  // onPick makes each value a button (pages).
  function panel(sec, by, d, selected, onPick, cols = ['views', 'uniques'], none = 'No views in this range') {
    const tbody = sec.querySelector('tbody');
    tbody.replaceChildren();
    const max = Math.max(1, ...d.rows.map((r) => r[cols[0]] || 0));
    for (const r of d.rows) {
      const tr = el('tr', r.value === selected ? 'selected' : null);
      const td = el('td', 'v');
      td.style.setProperty('--w', (100 * (r[cols[0]] || 0) / max).toFixed(1) + '%');
      td.title = r.value;
      if (onPick) {
        const b = el('button', null, label(by, r.value));
        b.type = 'button';
        b.title = 'Show only ' + r.value;
        b.addEventListener('click', () => onPick(r.value));
        td.append(b);
      } else {
        td.append(el('span', null, label(by, r.value)));
      }
      tr.append(td, ...cols.map((k, i) => {
        const c = el('td', 'n', cell(k, r[k]));
        if (i === 0 && k === 'views' && r.previous_views != null) c.append(delta(r.views, r.previous_views));
        return c;
      }));
      tbody.append(tr);
    }
    if (!d.rows.length) emptyRow(tbody, 1 + cols.length, none);
    const first = d.rows.length ? d.offset + 1 : 0;
    sec.querySelector('.range').textContent = `${fmt(first)}–${fmt(d.offset + d.rows.length)} of ${fmt(d.total_values)}`;
    sec.querySelector('.prev').disabled = d.offset === 0;
    sec.querySelector('.next').disabled = d.offset + d.rows.length >= d.total_values;
    sec.querySelector('.pager').hidden = d.total_values <= d.limit && d.offset === 0;
  }

  // delta is a row's change against the period compared with, beside its
  // views.
  function delta(now, before) {
    const n = before ? Math.round(((now - before) / before) * 100) : null;
    const s = el('span', 'delta ' + (n == null ? '' : n > 0 ? 'good' : n < 0 ? 'bad' : ''),
      n == null ? 'new' : (n > 0 ? '▲' : n < 0 ? '▼' : '±') + Math.abs(n) + '%');
    s.title = fmt(before) + ' views in ' + vs[1];
    return s;
  }

  // change says how a figure moved against the previous period: v is the
  // relative change (pts: the difference of two rates, in points); null
  // says the previous period had none (was: what it had instead). A rise
  // is good unless worse says otherwise; filtered events are neither.
  // vs names the period compared with (the dashboard's Compare).
  const VS = { '': ['previous period', 'the previous period'], previous: ['previous period', 'the previous period'],
    year: ['a year before', 'the same days a year before'], weekday: ['a year before, same weekdays', 'the same weekdays a year before'] };
  let vs = VS[''];
  function change(node, v, what, { pts, worse, was } = {}) {
    node.classList.remove('good', 'bad');
    if (v == null) {
      node.textContent = was || 'no ' + what + ' in ' + vs[1];
      return;
    }
    const n = Math.round(v * 1000) / 10;
    node.textContent = (n > 0 ? '▲ +' : n < 0 ? '▼ \u2212' : '± ') + Math.abs(n) + (pts ? ' pts' : '%') + ' vs ' + vs[0];
    if (what !== 'filtered events' && n !== 0) node.classList.add((n > 0) !== !!worse ? 'good' : 'bad');
  }

  // The engagement tiles: id, figure, format, what "none" is of, and
  // whether a rise is bad news (a bounce rate).
  const NOT_KEPT = 'Engagement is kept per dimension: not counted with filters on several';
  const NO_REPORTS = 'No engagement reports in this range: vc.js sends them as a page is hidden or left; the pixel cannot';
  const ENGAGEMENT = [
    ['visits', 'visits', fmt, 'visits'],
    ['bounce', 'bounce_rate', rate, 'visits', true],
    ['duration', 'visit_duration', dur, 'visits'],
    ['engaged', 'engaged_views', fmt, 'engaged views'],
    ['top', 'time_on_page', dur, 'engagement reports'],
    ['scroll', 'scroll_depth', pct, 'engagement reports'],
  ];

  // compareWith names the period the tiles and tables compare with.
  function compareWith(compare) { vs = VS[compare || ''] || VS['']; }

  function summary(d, $, page) {
    $('t-views').textContent = fmt(d.views);
    $('t-uniques').textContent = fmt(d.uniques);
    const e = Math.round(d.uniques * (d.uniques_error || 0));
    $('t-uerr').textContent = e > 0 ? '± ' + fmt(e) : '';
    $('t-uerr').title = `relative standard error ${(100 * (d.uniques_error || 0)).toFixed(2)} %`;
    // null: rejected events keep no dimension but their page, so a filter
    // on another leaves them uncounted (not_counted says so).
    $('t-filtered').textContent = d.filtered == null ? NONE : fmt(d.filtered);
    $('t-filtered').title = d.filtered == null ? 'Not counted with these filters: filtered events keep no dimension but their page' : '';
    const reasons = Object.entries(d.filtered_by_reason || {}).sort(byCount);
    $('t-freasons').textContent = reasons.slice(0, 3).map(([k, n]) => `${k} ${fmt(n)}`).join(' · ');
    change($('c-views'), d.change.views, 'views');
    change($('c-uniques'), d.change.uniques, 'visitors');
    if (d.filtered == null) $('c-filtered').textContent = '';
    else change($('c-filtered'), d.change.filtered, 'filtered events');

    const prev = d.previous_engagement || {}, ch = d.engagement_change || {};
    const noVisits = page ? 'No visit entered on this page in this range' : 'No visits in this range';
    const uncounted = (d.not_counted || []).includes('engagement');
    for (const [id, key, f, what, worse] of ENGAGEMENT) {
      // Engaged views are a count, never null, but without a report they
      // are not measured either.
      const measured = (o) => (key === 'engaged_views' ? o.reported_views > 0 : o[key] != null);
      const num = $('t-' + id), c = $('c-' + id);
      num.textContent = measured(d) ? f(d[key]) : NONE;
      num.title = measured(d) ? '' : uncounted ? NOT_KEPT : what === 'visits' ? noVisits : NO_REPORTS;
      if (!measured(d)) {
        c.textContent = '';
        c.classList.remove('good', 'bad');
        continue;
      }
      // No change: the previous period had none, or a 0 no change is
      // relative to (a duration or depth then says what it was).
      const none = key === 'engaged_views' && !measured(prev) ? 'engagement reports' : what;
      const was = measured(prev) && f !== fmt ? `${f(prev[key])} in the previous period` : '';
      change(c, ch[key], none, { pts: key === 'bounce_rate', worse, was });
    }
    $('s-visits').textContent = page ? 'that entered on this page' : '';
    $('s-engaged').textContent = `≥ ${fmt(d.engaged_after)} s engaged, of ${fmt(d.reported_views)} measured`;
    $('s-top').textContent = $('s-scroll').textContent = `median of ${fmt(d.reported_views)} measured views`;
  }

  // wall-clock start of a bucket in the site's zone: the API writes it with
  // the zone's offset, so its text is already local time.
  function bucketLabel(t, interval) {
    return interval === 'day' ? t.slice(0, 10) : t.slice(0, 16).replace('T', ' ');
  }

  // Time ticks on a 24-hour clock in the site's zone; midnight shows the date.
  function timeTicks(ticks, tz) {
    const hm = new Intl.DateTimeFormat('en-GB', { timeZone: tz, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    const day = new Intl.DateTimeFormat('en-GB', { timeZone: tz, day: 'numeric', month: 'short' });
    return ticks.map((ts) => {
      const d = new Date(ts * 1e3);
      const t = hm.format(d);
      return t === '00:00' ? day.format(d) : t;
    });
  }

  // The chart's metrics (the stats API's timeseries metric=): title, and
  // the y axis's range and labels. Views draw views and unique visitors.
  const whole = (f) => (u, ticks) => ticks.map((v) => (Number.isInteger(v) ? f(v) : ''));
  const upTo = (least) => (u, min, max) => [0, Math.max(least, max * 1.1)];
  const METRICS = {
    views: { title: 'Views and unique visitors' },
    visits: { title: 'Visits', name: 'Visits' },
    bounce_rate: { title: 'Bounce rate', name: 'Bounce rate', range: () => [0, 1], values: (u, ticks) => ticks.map((v) => Math.round(v * 100) + '%') },
    visit_duration: { title: 'Visit duration (mean)', name: 'Visit duration', range: upTo(10), values: whole(dur) },
    engaged_views: { title: 'Engaged views', name: 'Engaged views' },
    time_on_page: { title: 'Time on page (median)', name: 'Time on page', range: upTo(10), values: whole(dur) },
    scroll_depth: { title: 'Scroll depth (median)', name: 'Scroll depth', range: () => [0, 100], values: whole(pct) },
  };

  const charts = {};
  // chart draws series over data's x values; y may give the y axis's
  // range and tick labels (counts, from 0, by default). The axes take the
  // page's text and rule colours as the theme resolved them (a canvas
  // cannot read CSS variables).
  function chart(key, node, series, data, tz, y = {}) {
    if (charts[key]) charts[key].destroy();
    node.replaceChildren();
    if (typeof uPlot === 'undefined') return; // the table beside it still has the data
    const ink = getComputedStyle(document.body).color;
    const rule = getComputedStyle(node.closest('.card') || document.body).borderTopColor;
    const axis = { stroke: ink, grid: { stroke: rule }, ticks: { stroke: rule } };
    charts[key] = new uPlot({
      width: Math.max(300, node.clientWidth), height: 260,
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1e3), tz),
      scales: { y: { range: y.range || upTo(4) } },
      series: [{}, ...series],
      axes: [{ ...axis, values: (u, ticks) => timeTicks(ticks, tz) },
        { ...axis, size: 56, values: y.values || whole((v) => compact.format(v)) }],
    }, data, node);
  }
  function resize() {
    for (const c of Object.values(charts)) c.setSize({ width: Math.max(300, c.root.parentNode.clientWidth), height: 260 });
  }

  // timeseries draws a timeseries answer: views and unique visitors, or
  // the one metric it has (d.metric), a gap where it is null (nothing to
  // measure it on), and the same as a table.
  // before, when given, is the compared period's timeseries (compare names
  // it): drawn dashed beside the first figure, bucket for bucket (the
  // same number of buckets back; a shorter period leaves the rest empty),
  // and a column of the table.
  const COMPARED = { previous: 'the period before', year: 'a year before', weekday: 'a year before, same weekdays' };
  function timeseries(d, tz, $, before, compare) {
    const m = d.metric || 'views', M = METRICS[m];
    $('chart-h').textContent = M.title;
    $('chart').setAttribute('aria-label', M.title + ' over time; the table below has the same data');
    const then = (key) => (before ? d.buckets.map((_, i) => (before.buckets[i] ? before.buckets[i][key] : null)) : null);
    const thenName = (name) => name + ', ' + COMPARED[compare];
    if (m !== 'views') return metricSeries(d, m, M, tz, $, then(m), thenName(M.name));
    const xs = d.buckets.map((b) => Date.parse(b.t) / 1000);
    const was = then('views');
    chartHead($, ['Views', 'Unique visitors', ...(was ? [thenName('Views')] : [])]);
    chart('views', $('chart'), [
      { label: 'Views', stroke: '#2f6fde', width: 2, fill: 'rgba(47,111,222,0.12)' },
      { label: 'Unique visitors', stroke: '#e0843a', width: 2 },
      ...(was ? [{ label: thenName('Views'), stroke: '#2f6fde', width: 1.5, dash: [6, 4] }] : []),
    ], [xs, d.buckets.map((b) => b.views), d.buckets.map((b) => b.uniques), ...(was ? [was] : [])], tz);
    const tbody = $('chart-data').querySelector('tbody');
    tbody.replaceChildren();
    d.buckets.forEach((b, i) => {
      const tr = el('tr');
      tr.dataset.t = b.t;
      tr.append(el('td', null, bucketLabel(b.t, d.interval)), el('td', 'n', fmt(b.views)), el('td', 'n', fmt(b.uniques)));
      if (was) tr.append(el('td', 'n', cell('views', was[i])));
      tbody.append(tr);
    });
  }

  function chartHead($, names) {
    const tr = el('tr');
    tr.append(el('th', null, 'Start'), ...names.map((n) => el('th', 'n', n)));
    for (const th of tr.children) th.scope = 'col';
    $('chart-data').tHead.replaceChildren(tr);
  }

  function metricSeries(d, m, M, tz, $, was, wasName) {
    const xs = d.buckets.map((b) => Date.parse(b.t) / 1000);
    chartHead($, [M.name, ...(was ? [wasName] : [])]);
    chart('views', $('chart'), [{ label: M.name, stroke: '#2f6fde', width: 2, fill: 'rgba(47,111,222,0.12)', value: (u, v) => cell(m, v) },
      ...(was ? [{ label: wasName, stroke: '#2f6fde', width: 1.5, dash: [6, 4], value: (u, v) => cell(m, v) }] : [])],
    [xs, d.buckets.map((b) => b[m]), ...(was ? [was] : [])], tz, M);
    const tbody = $('chart-data').querySelector('tbody');
    tbody.replaceChildren();
    d.buckets.forEach((b, i) => {
      const tr = el('tr');
      tr.dataset.t = b.t;
      tr.append(el('td', null, bucketLabel(b.t, d.interval)), el('td', 'n', cell(m, b[m])));
      if (was) tr.append(el('td', 'n', cell(m, was[i])));
      tbody.append(tr);
    });
  }

  const palette = ['#b3261e', '#e0843a', '#8e44ad', '#2f6fde', '#16a085', '#7f8c8d', '#c0392b', '#d4ac0d', '#1b7f3b', '#34495e'];
  function filtered(d, tz, $) {
    const totals = {};
    for (const b of d.buckets) for (const [k, n] of Object.entries(b.by_reason || {})) totals[k] = (totals[k] || 0) + n;
    const reasons = Object.keys(totals).sort((a, b) => totals[b] - totals[a] || (a < b ? -1 : 1));
    const xs = d.buckets.map((b) => Date.parse(b.t) / 1000);
    chart('filtered', $('filtered-chart'), reasons.map((r, i) => ({ label: r, stroke: palette[i % palette.length], width: 2 })),
      [xs, ...reasons.map((r) => d.buckets.map((b) => (b.by_reason || {})[r] || 0))], tz);
    const table = $('filtered-data');
    const head = el('tr');
    head.append(el('th', null, 'Start'), ...reasons.map((r) => el('th', 'n', r)));
    for (const th of head.children) th.scope = 'col';
    table.tHead.replaceChildren(head);
    const tbody = table.tBodies[0];
    tbody.replaceChildren();
    for (const b of d.buckets) {
      if (!reasons.some((r) => (b.by_reason || {})[r])) continue; // only buckets with rejections
      const tr = el('tr');
      tr.dataset.t = b.t;
      tr.append(el('td', null, bucketLabel(b.t, d.interval)), ...reasons.map((r) => el('td', 'n', fmt((b.by_reason || {})[r] || 0))));
      tbody.append(tr);
    }
    if (!tbody.rows.length) emptyRow(tbody, 1 + reasons.length, 'No filtered events in this range');
    const pages = $('filtered-pages').tBodies[0];
    pages.replaceChildren();
    for (const p of d.top_pages || []) {
      const all = Object.entries(p.by_reason || {}).sort(byCount).map(([k, n]) => `${k} ${fmt(n)}`);
      const tr = el('tr');
      const td = el('td', 'v');
      td.append(el('span', null, p.page));
      td.title = p.page;
      const reasons = el('td', 'reasons', all.slice(0, 2).join(' · ') + (all.length > 2 ? ' …' : ''));
      reasons.title = all.join(' · ');
      tr.append(td, el('td', 'n', fmt(p.filtered)), reasons);
      pages.append(tr);
    }
    if (!pages.rows.length) emptyRow(pages, 3, 'No filtered events in this range');
  }

  // classLabel is a browser and device class as a person reads it ('' is
  // what the validator stores when it could not tell).
  const classLabel = (browser, device) => (browser || 'unknown browser') + ' · ' + (device || 'unknown device');

  // barCell is a table's first cell: text over a bar as long as its share
  // of the largest count, the whole text in its tooltip.
  function barCell(text, n, max) {
    const td = el('td', 'v');
    td.style.setProperty('--w', (100 * n / max).toFixed(1) + '%');
    td.title = text;
    td.append(el('span', null, text));
    return td;
  }

  // rejected fills the filtered panel's top user agents and browser and
  // device classes of one reason, from an /invalid answer, and returns the
  // reason shown: the one asked for while it has rejections, else the
  // reason with the most. User agents are whatever clients sent: they go
  // in as text, like every value here. d null with a message says why
  // there is nothing to show.
  function rejected(d, reason, $, message) {
    const reasons = Object.entries((d && d.by_reason) || {}).sort(byCount);
    if (!reasons.some(([r]) => r === reason)) reason = reasons.length ? reasons[0][0] : '';
    const pick = $('rejected-reason');
    pick.replaceChildren(...reasons.map(([r, n]) => {
      const o = el('option', null, `${r} · ${fmt(n)}`);
      o.value = r;
      return o;
    }));
    pick.value = reason;
    pick.disabled = reasons.length < 2;
    const none = message || 'No filtered events in this range';
    const agents = $('rejected-agents').tBodies[0];
    agents.replaceChildren();
    const ua = ((d && d.top_user_agents) || {})[reason] || [];
    const maxUA = Math.max(1, ...ua.map((a) => a.events));
    for (const a of ua) {
      const text = a.ua === '' ? '(no user agent)' : a.ua + (a.truncated ? '…' : '');
      const tr = el('tr');
      tr.append(barCell(text, a.events, maxUA), el('td', 'cls', classLabel(a.browser, a.device)), el('td', 'n', fmt(a.events)));
      agents.append(tr);
    }
    if (!agents.rows.length) emptyRow(agents, 3, none);
    const classes = $('rejected-classes').tBodies[0];
    classes.replaceChildren();
    const cls = ((d && d.top_classes) || {})[reason] || [];
    const maxCls = Math.max(1, ...cls.map((c) => c.events));
    for (const c of cls) {
      const tr = el('tr');
      tr.append(barCell(classLabel(c.browser, c.device), c.events, maxCls), el('td', 'n', fmt(c.events)));
      classes.append(tr);
    }
    if (!classes.rows.length) emptyRow(classes, 2, none);
    return reason;
  }

  // sharePct is a share (0-1) as a percentage a person reads: one decimal
  // below 10 %, whole points above ("0.2 %", "61 %").
  const sharePct = (x) => {
    const p = 100 * x;
    return (p < 10 ? (Math.round(p * 10) / 10).toString() : Math.round(p).toString()) + ' %';
  };
  // outlierLine is one value of the engagement outliers as a sentence:
  // "AS 12345: 4,000 views, 0.2 % engaged (site: 61 %)".
  const OUTLIER_NAMES = { by_asn: (v) => 'AS ' + v, by_referrer: (v) => v, by_browser: (v) => v };
  function outlierLine(list, o) {
    return `${OUTLIER_NAMES[list](o.value)}: ${fmt(o.views)} views, ${sharePct(o.engaged_share)} engaged (site: ${sharePct(o.site_engaged_share)})`;
  }

  // outliers fills the filtered panel's "Counted, rarely engaged" lists
  // from an /invalid answer's engagement_outliers: per AS number, referrer
  // host and browser, the values whose views were engaged far less often
  // than the site's, each with the correction that would exclude it (a
  // browser has none). Values are whatever clients sent: text only.
  function outliers(d, $, message) {
    const o = d && d.engagement_outliers;
    $('outliers-site').textContent = o && o.views
      ? `Site: ${fmt(o.views)} views, ${sharePct(o.engaged_share)} engaged for ${o.engaged_after} s or more. Listed: ${fmt(o.min_views)}+ views, engaged less often than the site's.`
      : '';
    for (const list of ['by_asn', 'by_referrer', 'by_browser']) {
      const ul = $('outliers-' + list.slice(3));
      ul.replaceChildren();
      for (const x of (o && o[list]) || []) {
        const li = el('li', null);
        li.append(el('span', 'line', outlierLine(list, x)));
        if (x.exclude) {
          const cmd = `viewcount correct add --site ${d.site} --kind ${x.exclude.kind} --value ${x.exclude.value} --from ${d.from} --to ${d.to} --why "…"`;
          li.append(el('code', 'fix', cmd));
        }
        ul.append(li);
      }
      if (!ul.children.length) ul.append(el('li', 'empty', message || 'None below the site\'s share'));
    }
  }

  function live(d, $) {
    $('t-now').textContent = fmt(d.visitors_now);
    const lag = d.lag_seconds == null ? '' : ` · counting ${d.lag_seconds < 1 ? 'up to date' : 'behind by ' + d.lag_seconds.toFixed(1) + ' s'}`;
    $('t-live').textContent = `${fmt(d.views_5m)} views in the last 5 minutes${lag}`;
  }

  // map draws the countries of d (a country breakdown) on the world map
  // (world: world-atlas's TopoJSON; codes: ISO numeric to alpha-2), the
  // more views the deeper the fill; each country's title says its views,
  // and a click on one picks it (onPick). Plate carrée from 84° N to 58°
  // S (no Antarctica), in SVG built node by node.
  const SVG = 'http://www.w3.org/2000/svg';
  function worldMap(box, world, codes, d, onPick) {
    const alpha2 = Object.fromEntries(codes.map((c) => [c[2], c[0]]));
    const views = Object.fromEntries(d.rows.map((r) => [r.value, r.views]));
    const max = Math.max(1, ...d.rows.map((r) => r.views));
    const [sx, sy] = world.transform.scale, [tx, ty] = world.transform.translate;
    const arcs = world.arcs.map((arc) => {
      let x = 0, y = 0;
      return arc.map(([dx, dy]) => { x += dx; y += dy; return [x * sx + tx, y * sy + ty]; });
    });
    // A ring's points, longitudes unwrapped where it crosses 180° (Fiji,
    // Chukotka): what lies past the edge is cut by the view box.
    const ring = (ids) => {
      const pts = ids.flatMap((i, k) => { const a = i < 0 ? arcs[~i].slice().reverse() : arcs[i]; return k ? a.slice(1) : a; });
      let prev = pts[0][0];
      return pts.map(([x, y]) => { while (x - prev > 180) x -= 360; while (prev - x > 180) x += 360; prev = x; return [x, y]; });
    };
    const svg = document.createElementNS(SVG, 'svg');
    svg.setAttribute('viewBox', '0 0 360 142');
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', 'Views by country on a world map; the Countries tab has the same data');
    for (const g of world.objects.countries.geometries) {
      if (g.id === '010' || !g.arcs) continue; // Antarctica
      const polys = g.type === 'Polygon' ? [g.arcs] : g.arcs;
      const dpath = polys.map((p) => p.map((r) => 'M' + ring(r).map(([x, y]) => (x + 180).toFixed(1) + ',' + (84 - y).toFixed(1)).join('L') + 'Z').join('')).join('');
      const path = document.createElementNS(SVG, 'path');
      path.setAttribute('d', dpath);
      const code = alpha2[g.id] || '', n = views[code] || 0;
      path.dataset.country = code;
      if (n > 0) {
        path.classList.add('seen');
        path.style.setProperty('--share', (0.15 + 0.85 * Math.sqrt(n / max)).toFixed(3));
        if (onPick) path.addEventListener('click', () => onPick(code));
      }
      const title = document.createElementNS(SVG, 'title');
      title.textContent = (code ? label('country', code) : (g.properties && g.properties.name) || '') + ': ' + fmt(n) + ' views';
      path.append(title);
      svg.append(path);
    }
    box.replaceChildren(svg);
  }

  return { el, fmt, panel, worldMap, compareWith, summary, timeseries, filtered, rejected, outliers, live, resize };
})();

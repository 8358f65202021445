// Viewcount dashboard: state, the stats API, sign-in and share links.
//
// The token lives in this tab's sessionStorage and goes out only in the
// Authorization header of our own API calls: a browser never sends it by
// itself (no cookie, so no cross-site request can use it) and it is gone
// when the tab closes. A share link's token is read from the URL fragment,
// which browsers never send to a server.
'use strict';
(() => {
  const R = window.vcRender;
  const $ = (id) => document.getElementById(id);
  const site = decodeURIComponent(location.pathname.split('/')[2] || '');
  const storeKey = 'viewcount.token.' + site;
  const LIVE_MS = 10000;
  // The Pages card's tabs: breakdown, title, columns, headings, and what
  // an empty one says. Entry and exit pages rank the site's visits: the
  // API keeps them for the whole site only.
  const TABS = [
    ['page', 'Pages', ['views', 'uniques', 'time_on_page', 'scroll_depth'], ['Views', 'Uniques', 'Time on page', 'Scroll depth'], 'No views in this range'],
    ['entry_page', 'Entry pages', ['visits', 'bounce_rate', 'visit_duration'], ['Visits', 'Bounce rate', 'Visit duration'], 'No visits in this range'],
    ['exit_page', 'Exit pages', ['exits'], ['Exits'], 'No visits in this range'],
  ];
  const tabOf = Object.fromEntries(TABS.map((t) => [t[0], t]));
  const PANELS = [
    ['source', 'Sources', 'Source'], ['channel', 'Channels', 'Channel'], ['referrer', 'Referrers', 'Referrer'],
    ['utm_source', 'UTM sources', 'utm_source'], ['utm_medium', 'UTM mediums', 'utm_medium'],
    ['utm_campaign', 'Campaigns', 'utm_campaign'], ['browser', 'Browsers', 'Browser'],
    ['os', 'OS', 'OS'], ['device', 'Devices', 'Device'], ['country', 'Countries', 'Country'],
    ['screen', 'Screens', 'Screen'],
  ];
  // The cards: each a few breakdowns that answer one question, as tabs
  // (the Pages card's are TABS). cardOf: a breakdown's card.
  const CARDS = [
    ['pages', 'Pages', TABS.map((t) => t[0])],
    ['sources', 'Sources', ['source', 'channel', 'referrer', 'utm_source', 'utm_medium', 'utm_campaign']],
    ['places', 'Countries', ['country', 'map']],
    ['devices', 'Devices', ['browser', 'os', 'device', 'screen']],
  ];
  const cardOf = Object.fromEntries(CARDS.flatMap(([card, , bys]) => bys.map((by) => [by, card])));
  const titleOf = { ...Object.fromEntries(TABS.concat(PANELS).map((t) => [t[0], t[1]])), map: 'Map' };
  // The engaged-time thresholds a site's engaged_after may be: the
  // bounds of the engaged-time histogram (viewcount.EngagedBuckets but 0;
  // TestEngagedAfterChoices keeps them equal).
  const ENGAGED_AFTER = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 20, 25, 30, 40, 45, 50, 60,
    75, 90, 120, 150, 180, 240, 300, 420, 600, 900, 1200, 1800, 2700, 3600];
  const state = { token: '', verified: false, share: false, tz: 'UTC', range: '7d', from: '', to: '', interval: '', metric: 'views', page: '', filters: [], offsets: {}, gen: 0, live: 0, wholeSite: { entry_page: true, exit_page: true }, tabs: Object.fromEntries(CARDS.map(([card, , bys]) => [card, bys[0]])), rejected: null, reason: '', urlReady: false, compare: '' };
  const panels = {};

  class HTTPError extends Error {
    constructor(status, msg) { super(msg); this.status = status; }
  }

  async function call(method, path, params, accept, body) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params || {})) {
      if (Array.isArray(v)) for (const x of v) q.append(k, x); // filter=, one each
      else if (v !== '' && v != null) q.set(k, v);
    }
    const qs = q.toString();
    const res = await fetch('/v1/sites/' + encodeURIComponent(site) + path + (qs ? '?' + qs : ''), {
      method, cache: 'no-store', credentials: 'omit',
      headers: { Authorization: 'Bearer ' + state.token, Accept: accept || 'application/json', ...(body && { 'Content-Type': 'application/json' }) },
      ...(body && { body: JSON.stringify(body) }),
    });
    if (!res.ok) {
      let msg = `${res.status} ${res.statusText}`;
      try { const b = await res.json(); if (b && b.error) msg = b.error; } catch (_) { /* not JSON */ }
      throw new HTTPError(res.status, msg);
    }
    if (accept === 'text/csv') return res.text();
    return res.status === 204 ? null : res.json();
  }
  const stats = (what, params) => call('GET', '/stats/' + what, params);

  // Dates are the site's calendar days: the API reads YYYY-MM-DD in the
  // site's time zone, so "today" must be today there, not here.
  const ymd = (date, tz) => new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' }).format(date);
  const addDays = (s, n) => { const d = new Date(s + 'T00:00:00Z'); d.setUTCDate(d.getUTCDate() + n); return d.toISOString().slice(0, 10); };
  const days = (a, b) => Math.round((Date.parse(b) - Date.parse(a)) / 864e5) + 1;
  const iso = (ms) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
  // localDay is a range bound's day in the site's zone (24 h is in UTC times).
  const localDay = (s) => (s.length > 10 ? ymd(new Date(s), state.tz) : s);

  const monthStart = (s) => s.slice(0, 8) + '01';
  const addMonths = (s, n) => { const d = new Date(monthStart(s) + 'T00:00:00Z'); d.setUTCMonth(d.getUTCMonth() + n); return d.toISOString().slice(0, 10); };
  const monthEnd = (s) => addDays(addMonths(s, 1), -1);

  // range is the state's range as the API's from and to (the site's days,
  // both included; 24 h as instants) and its length in days.
  function range() {
    const today = ymd(new Date(), state.tz);
    const dates = (from, to) => ({ from, to, span: days(from, to) });
    const last = (n) => dates(addDays(today, 1 - n), today);
    switch (state.range) {
      case 'today': return dates(today, today);
      case 'yesterday': return dates(addDays(today, -1), addDays(today, -1));
      case 'realtime': { const now = Date.now(); return { from: iso(now - 30 * 6e4), to: iso(now), span: 1 }; }
      case '24h': { const now = Date.now(); return { from: iso(now - 864e5), to: iso(now), span: 1 }; }
      case '28d': return last(28);
      case '30d': return last(30);
      case '91d': return last(91);
      case 'month': return dates(monthStart(today), today);
      case 'lastmonth': return dates(addMonths(today, -1), addDays(monthStart(today), -1));
      case 'year': return dates(today.slice(0, 4) + '-01-01', today);
      case '12mo': return last(365);
      // All time: from the site's first counted day (realtime's
      // first_day), at most 400 days back, the stats API's cap.
      case 'all': return dates(state.firstDay && state.firstDay > addDays(today, -399) ? state.firstDay : addDays(today, -399), today);
      case 'custom': return dates(state.from, state.to);
      default: return last(7);
    }
  }

  // byInstants: the range is instants (realtime, 24 h), not the site's
  // days; such a range neither steps nor compares.
  const byInstants = () => state.range === 'realtime' || state.range === '24h';

  // stepped is the period before (dir -1) or after (1) the range, as a
  // custom range: a calendar month for a month (to date, last, or a custom
  // whole month), a calendar year for a year (to date, or a custom whole
  // year), else as many days as the range has. A period after today is
  // none; one reaching past today ends today. Realtime and 24 h do not
  // step.
  function stepped(dir) {
    if (byInstants() || state.range === 'all') return null;
    const r = range(), today = ymd(new Date(), state.tz);
    const month = state.range === 'month' || state.range === 'lastmonth' || (r.from === monthStart(r.from) && r.to === monthEnd(r.from));
    const year = state.range === 'year' || (r.from.slice(5) === '01-01' && r.to === r.from.slice(0, 4) + '-12-31');
    let from, to;
    if (year) {
      from = String(Number(r.from.slice(0, 4)) + dir) + '-01-01';
      to = from.slice(0, 4) + '-12-31';
    } else if (month) {
      from = addMonths(r.from, dir);
      to = monthEnd(from);
    } else {
      from = addDays(r.from, dir * r.span);
      to = addDays(r.to, dir * r.span);
    }
    if (from > today) return null;
    return { from, to: to > today ? today : to };
  }

  // compared is the period the chart draws beside the range (state.compare:
  // the period before it, as many days back, or the same dates a year
  // before, 29 February read as the 28th), or null: none picked, or a range
  // of instants (24 h, realtime), which compares nothing.
  function compared() {
    if (!state.compare || byInstants()) return null;
    const r = range();
    if (state.compare === 'previous') return { from: addDays(r.from, -r.span), to: addDays(r.to, -r.span) };
    if (state.compare === 'weekday') return { from: addDays(r.from, -364), to: addDays(r.to, -364) }; // 52 weeks
    const back = (s) => String(Number(s.slice(0, 4)) - 1) + (s.slice(4) === '-02-29' ? '-02-28' : s.slice(4));
    return { from: back(r.from), to: back(r.to) };
  }

  function step(dir) {
    const s = stepped(dir);
    if (!s) return;
    Object.assign(state, { range: 'custom', from: s.from, to: s.to, offsets: {} });
    showState();
    fitInterval(days(s.from, s.to), true);
    load();
  }

  // The colour theme: the system's (auto) unless this button chose light
  // or dark, kept in this browser's localStorage (nothing secret). The
  // charts are drawn again in the new colours.
  const THEMES = ['auto', 'dark', 'light'];
  const themeKey = 'viewcount.theme';
  function applyTheme(theme) {
    const root = document.documentElement;
    if (theme === 'auto') delete root.dataset.theme;
    else root.dataset.theme = theme;
    $('theme').textContent = 'Theme: ' + theme;
    $('theme').setAttribute('aria-label', 'Colour theme: ' + theme + '; change');
  }
  function redraw() {
    if (state.token && !$('dash').hidden) load();
  }

  // The view lives in the URL's query (range, custom dates, interval,
  // chart metric, page filter, Pages tab), so a reload, Back and Forward
  // and a pasted link (a share link too: its token stays in the fragment)
  // show the same view. What the URL says is checked against what the
  // controls offer; anything else reads as the default.
  const RANGES = ['realtime', 'today', 'yesterday', '24h', '7d', '28d', '30d', '91d', 'month', 'lastmonth', 'year', '12mo', 'all', 'custom'];
  const isDay = (s) => /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s + 'T00:00:00Z'));
  const autoInterval = (span) => (state.range === 'realtime' ? 'minute' : span <= 7 ? 'hour' : 'day');

  // A filter as the stats API reads it: dimension, operator, values
  // ('|' between them; docs/stats-api.md, "Filters").
  const FILTER_DIMS = { page: 'Page', source: 'Source', channel: 'Channel', referrer: 'Referrer', utm_source: 'UTM source', utm_medium: 'UTM medium', utm_campaign: 'UTM campaign', country: 'Country', browser: 'Browser', os: 'OS', device: 'Device', screen: 'Screen' };
  const FILTER_OPS = { '==': 'is', '!=': 'is not', '~': 'contains', '!~': 'does not contain' };
  const FILTER = new RegExp('^(' + Object.keys(FILTER_DIMS).join('|') + ')(==|!=|!~|~)([^]+)$');
  const escValue = (v) => v.replace(/[\\|]/g, (c) => '\\' + c);
  const unescValues = (s) => {
    const out = [''];
    for (let i = 0; i < s.length; i++) {
      if (s[i] === '\\' && i + 1 < s.length) out[out.length - 1] += s[++i];
      else if (s[i] === '|') out.push('');
      else out[out.length - 1] += s[i];
    }
    return out;
  };

  function readURL() {
    const q = new URLSearchParams(location.search);
    const pick = (v, allowed, dflt) => (allowed.includes(v) ? v : dflt);
    const options = (id) => [...$(id).options].map((o) => o.value);
    state.range = pick(q.get('range'), RANGES, '7d');
    state.from = state.to = '';
    if (state.range === 'custom') {
      const from = q.get('from') || '', to = q.get('to') || '';
      if (isDay(from) && isDay(to) && from <= to) Object.assign(state, { from, to });
      else state.range = '7d';
    }
    state.interval = pick(q.get('interval'), options('interval'), ''); // '': the range's own
    state.metric = pick(q.get('metric'), options('metric'), 'views');
    const page = q.get('page') || '';
    state.page = page.startsWith('/') && page.length <= 2048 ? page : '';
    state.filters = q.getAll('filter').filter((f) => FILTER.test(f) && f.length <= 4096).slice(0, 10);
    // tab=: each card's tab when not its first (tab=entry_page&tab=os).
    const tabs = q.getAll('tab');
    for (const [card, , bys] of CARDS) state.tabs[card] = bys.find((by) => tabs.includes(by)) || bys[0];
    state.compare = pick(q.get('compare'), ['previous', 'year', 'weekday'], '');
    state.offsets = {};
  }

  // showState sets the controls to the state read from the URL.
  function showState() {
    for (const r of document.querySelectorAll('input[name=range]')) r.checked = r.value === state.range;
    $('custom').hidden = state.range !== 'custom';
    if (state.range === 'custom') { $('from').value = state.from; $('to').value = state.to; }
    $('filter-page').textContent = state.page;
    $('filter').hidden = !state.page;
    showChips();
    selectMetric(state.metric);
    for (const card of CARDS) selectTab(state.tabs[card[0]], true);
    $('compare').value = state.compare;
  }

  // urlOf is the view as this page's URL, defaults left out.
  function urlOf() {
    const q = new URLSearchParams();
    if (state.range !== '7d') q.set('range', state.range);
    if (state.range === 'custom') { q.set('from', state.from); q.set('to', state.to); }
    if (state.interval && state.interval !== autoInterval(range().span)) q.set('interval', state.interval);
    if (state.metric !== 'views') q.set('metric', state.metric);
    if (state.page) q.set('page', state.page);
    for (const f of state.filters) q.append('filter', f);
    for (const [card, , bys] of CARDS) if (state.tabs[card] !== bys[0]) q.append('tab', state.tabs[card]);
    if (state.compare) q.set('compare', state.compare);
    const theme = new URLSearchParams(location.search).get('theme');
    if (THEMES.includes(theme)) q.set('theme', theme); // an embedding page's, kept
    const qs = q.toString();
    return location.pathname + (qs ? '?' + qs : '') + location.hash;
  }

  // remember puts the view in the URL: a history entry of its own for a
  // change the user made, or in place of the current one.
  function remember(replace) {
    const u = urlOf();
    if (u === location.pathname + location.search + location.hash) return;
    if (replace) history.replaceState(null, '', u);
    else history.pushState(null, '', u);
  }

  // The intervals a span allows (the API caps minute buckets at 24 h and
  // hour buckets at 7 days; an engagement metric has no minute buckets);
  // the select offers only those.
  function fitInterval(span, keep) {
    const ok = { minute: span <= 1 && state.metric === 'views', hour: span <= 7, day: true };
    for (const o of $('interval').options) o.disabled = !ok[o.value];
    const auto = autoInterval(span);
    state.interval = keep && ok[state.interval] ? state.interval : ok[auto] ? auto : 'hour';
    $('interval').value = state.interval;
  }

  function baseParams() {
    const r = range();
    // The tiles and tables compare with the period Compare names (the
    // period before when it names none).
    const c = compared();
    return { from: r.from, to: r.to, page: state.page, filter: state.filters, compare_from: c && c.from, compare_to: c && c.to };
  }

  // coarsening asks for buckets of the interval given and, if the range is
  // over that interval's cap (a week that holds a daylight-saving change
  // has 169 hours), for the next coarser one.
  async function coarsening(what, p, interval) {
    const next = { minute: 'hour', hour: 'day' };
    for (;;) {
      try {
        return await stats(what, { ...p, interval });
      } catch (e) {
        if (e.status !== 400 || !e.message.startsWith('to:') || !next[interval]) throw e;
        interval = next[interval];
      }
    }
  }

  // loadPanel reads one breakdown. A store may keep breakdowns of one page
  // for some dimensions only (the API answers 400 naming page); those
  // panels then show the whole site and say so.
  async function loadPanel(by, gen) {
    const p = { ...baseParams(), by, limit: 10, offset: state.offsets[by] || 0 };
    if (state.wholeSite[by]) { delete p.page; delete p.filter; }
    let d;
    try {
      d = await stats('breakdown', p);
    } catch (e) {
      if (!p.page || e.status !== 400 || !e.message.startsWith('page:')) throw e;
      state.wholeSite[by] = true;
      delete p.page;
      d = await stats('breakdown', p);
    }
    if (gen !== state.gen) return;
    const tab = tabOf[by];
    // The Pages card's tabs pick a page; any other row adds its is-filter.
    const pick = tab ? pickPage : (v) => addFilter(by + '==' + escValue(v));
    const selected = tab ? state.page : chosen(by);
    if (tab) R.panel(panels[by], by, d, selected, pick, tab[2], tab[4]);
    else R.panel(panels[by], by, d, selected, pick);
    panels[by].querySelector('.note').hidden = !((state.page || state.filters.length) && state.wholeSite[by]);
  }

  // loadRejected reads the invalid-traffic report over the filtered
  // panel's range (its answer's from and to: the site's days as instants)
  // for the top user agents and classes per reason and the engagement
  // outliers. The report spans at
  // most 366 days, fewer than the stats API: a longer range says so there
  // and leaves the rest of the dashboard alone.
  async function loadRejected(filtered, gen) {
    if (gen !== state.gen) return; // a newer load asks for its own range
    let d = null, message = '';
    try {
      d = await call('GET', '/invalid', { from: filtered.from, to: filtered.to });
    } catch (e) {
      if (e.status !== 400) throw e;
      message = 'Not shown for this range: ' + e.message;
    }
    if (gen !== state.gen) return;
    state.rejected = d;
    state.reason = R.rejected(d, state.reason, $, message);
    R.outliers(d, $, message);
  }

  // load reads everything for the current range and filter; answers of an
  // older load (the range changed meanwhile) are dropped, never drawn.
  async function load() {
    remember(!state.urlReady); // the first load settles the URL it was opened with
    state.urlReady = true;
    $('prev').disabled = !stepped(-1);
    $('next').disabled = !stepped(1);
    $('compare').disabled = byInstants();
    const gen = ++state.gen;
    document.body.dataset.state = 'loading';
    R.compareWith(byInstants() ? '' : state.compare);
    const p = baseParams();
    const span = range().span;
    const only = (f) => (d) => { if (gen === state.gen) f(d); };
    // Rejected events keep no dimension but their page: that panel
    // leaves the other filters out (and says so).
    const filtered = coarsening('filtered', { ...p, filter: [] }, span <= 7 ? 'hour' : 'day');
    $('filtered-note').hidden = !state.filters.length;
    const jobs = [
      stats('summary', p).then(only((d) => { R.summary(d, $, state.page); showAsOf(d); })),
      coarsening('timeseries', seriesParams(p), state.interval).then(async (d) => {
        // The period compared, in the buckets the range got.
        const c = compared();
        const before = c && (await stats('timeseries', seriesParams({ ...p, ...c, interval: d.interval })));
        if (gen !== state.gen) return;
        if (d.interval !== state.interval) { state.interval = d.interval; $('interval').value = d.interval; }
        R.timeseries(d, state.tz, $, before, state.compare);
      }),
      filtered.then(only((d) => R.filtered(d, state.tz, $))),
      filtered.then((d) => loadRejected(d, gen)),
      // Channels are computed per view (no rollup keeps them): read when
      // their tab is shown.
      ...TABS.concat(PANELS).filter(([by]) => by !== 'channel' || state.tabs.sources === 'channel').map(([by]) => loadPanel(by, gen)),
      state.tabs.places === 'map' ? loadMap(gen) : null,
    ];
    const failed = (await Promise.allSettled(jobs)).filter((r) => r.status === 'rejected').map((r) => r.reason);
    if (gen !== state.gen) return;
    if (failed.length) {
      if (failed.some((e) => e.status === 401)) return unauthorised();
      $('error').textContent = 'Some numbers could not be read: ' + failed[0].message;
      document.body.dataset.state = 'error';
    } else {
      $('error').textContent = '';
      document.body.dataset.state = 'ready';
    }
    document.body.dataset.load = String(gen);
  }

  // seriesParams asks for the chart's metric (views, the default, unnamed).
  const seriesParams = (p) => (state.metric === 'views' ? p : { ...p, metric: state.metric });

  // selectMetric shows a metric on the chart: picked in the chart's select
  // or by a click on its tile, as Plausible's tiles do.
  function selectMetric(m) {
    state.metric = m;
    $('metric').value = m;
    for (const tile of document.querySelectorAll('.tile[data-metric]')) {
      const on = tile.dataset.metric === m;
      tile.classList.toggle('on', on);
      tile.querySelector('.pick').setAttribute('aria-pressed', String(on));
    }
  }

  // buildTiles makes a click anywhere on a tile with a metric pick it, and
  // gives each a button for the keyboard and screen readers, labelled with
  // the tile's heading, under the tile's text (whose tooltips still show).
  function buildTiles() {
    for (const tile of document.querySelectorAll('.tile[data-metric]')) {
      const b = R.el('button', 'pick');
      b.type = 'button';
      b.setAttribute('aria-label', 'Chart ' + tile.querySelector('h2').textContent.trim().toLowerCase());
      tile.prepend(b);
      tile.addEventListener('click', () => pickMetric(tile.dataset.metric));
    }
    selectMetric(state.metric);
  }

  function pickMetric(m) {
    if (m === state.metric) return;
    selectMetric(m);
    fitInterval(range().span, true);
    load();
  }

  // The public count panel: the site's settings (GET and PATCH
  // /settings), for the site's owner; a share link never shows it (and
  // the API refuses its token: 403).
  const threshold = (s) => (s < 60 ? s + ' s' : s % 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : s / 60 + ' min');
  function showSettings(s) {
    for (const r of document.querySelectorAll('input[name=count-mode]')) r.checked = r.value === s.count_mode;
    $('engaged-after').value = String(s.engaged_after);
    $('count-panel').dataset.mode = s.count_mode;
    $('count-panel').dataset.engagedAfter = String(s.engaged_after);
  }

  async function openSettings() {
    $('count-msg').textContent = '';
    $('count-save').disabled = true;
    try {
      showSettings(await call('GET', '/settings'));
      $('count-save').disabled = false;
    } catch (e) {
      if (e.status === 401) return unauthorised();
      $('count-msg').textContent = e.status === 403 ? 'Only the site\'s owner can change this.' : 'The settings could not be read: ' + e.message;
    }
  }

  async function saveSettings() {
    const mode = document.querySelector('input[name=count-mode]:checked');
    $('count-msg').textContent = '';
    try {
      const s = await call('PATCH', '/settings', null, null, { count_mode: mode ? mode.value : 'views', engaged_after: Number($('engaged-after').value) });
      showSettings(s);
      $('count-msg').textContent = s.count_mode === 'engaged'
        ? `Saved: public counts show engaged views (engaged for ${threshold(s.engaged_after)} or more), within a few seconds.`
        : 'Saved: public counts show every counted view, within a few seconds.';
      load(); // the Engaged views tile counts from the threshold
    } catch (e) {
      if (e.status === 401) return unauthorised();
      $('count-msg').textContent = 'Not saved: ' + e.message;
    }
  }

  function showAsOf(d) {
    const t = new Date(d.as_of);
    const when = new Intl.DateTimeFormat('en-GB', { timeZone: state.tz, dateStyle: 'medium', timeStyle: 'medium' }).format(t);
    $('as-of').textContent = `Data as of ${when} · times in ${d.timezone || state.tz}`;
    $('as-of').dataset.asOf = d.as_of;
  }

  async function poll() {
    if (document.hidden || !state.token) return;
    if (state.range === 'realtime' && document.body.dataset.state !== 'loading') load(); // the last 30 minutes, moving
    try {
      R.live(await stats('realtime'), $);
    } catch (e) {
      if (e.status === 401) unauthorised();
    }
  }

  // loadMap draws the Map tab: the world map, fetched once when first
  // shown (from this origin, beside the page's own files), and the
  // views of every country.
  let world = null;
  async function loadMap(gen) {
    const dir = $('map-src').href.replace(/[^/]*$/, '');
    world = world || Promise.all(['countries-110m.json', 'codes.json'].map((f) => fetch(dir + f).then((r) => {
      if (!r.ok) throw new Error('world map: ' + r.status);
      return r.json();
    }))).catch((e) => { world = null; throw e; }); // a failed fetch is tried again on the next load
    const [[topo, codes], d] = await Promise.all([world, stats('breakdown', { ...baseParams(), by: 'country', limit: 300 })]);
    if (gen !== state.gen) return;
    R.worldMap($('panel-map'), topo, codes, d, (code) => addFilter('country==' + code));
  }

  // The detail view of a breakdown: every value with its full name, 20 a
  // page, searched by a contains filter on the dimension (the stats
  // API's own), over the view's range and filters. Entry and exit pages
  // are the site's visits: no search there.
  const detail = { by: '', offset: 0, gen: 0 };
  function openDetail(by) {
    Object.assign(detail, { by, offset: 0 });
    const tab = tabOf[by], heads = tab ? tab[3] : ['Views', 'Uniques'];
    $('detail-h').textContent = titleOf[by];
    const tr = $('detail').querySelector('thead tr');
    tr.replaceChildren(R.el('th', null, tab ? 'Page' : PANELS.find((p) => p[0] === by)[2]), ...heads.map((h) => R.el('th', 'n', h)));
    $('detail-search').value = '';
    $('detail-search').disabled = !!state.wholeSite[by];
    $('detail').hidden = false;
    $('detail-search').focus();
    loadDetail();
  }
  function closeDetail() { $('detail').hidden = true; }
  async function loadDetail() {
    const { by } = detail, gen = ++detail.gen, q = $('detail-search').value.trim();
    const p = { ...baseParams(), by, limit: 20, offset: detail.offset };
    if (q) p.filter = [...state.filters, by + '~' + escValue(q)];
    if (state.wholeSite[by]) { delete p.page; delete p.filter; }
    try {
      const d = await stats('breakdown', p);
      if (gen !== detail.gen) return;
      const tab = tabOf[by];
      const pick = (v) => { closeDetail(); (tab ? pickPage : (x) => addFilter(by + '==' + escValue(x)))(v); };
      R.panel($('detail'), by, d, tab ? state.page : chosen(by), pick, tab ? tab[2] : undefined, tab ? tab[4] : 'No values match');
    } catch (e) {
      if (gen === detail.gen) $('detail').querySelector('.range').textContent = e.message;
    }
  }

  // chosen is the one value an is-filter on by picks, highlighted in its
  // panel.
  function chosen(by) {
    const f = state.filters.find((x) => x.startsWith(by + '==') && !x.includes('|'));
    return f ? f.slice(by.length + 2) : '';
  }

  // showChips draws a removable chip per filter (the page's is #filter).
  function showChips() {
    $('chips').replaceChildren(...state.filters.map((f) => {
      const [, dim, op, rest] = f.match(FILTER);
      const chip = R.el('span', 'chip');
      chip.append(FILTER_DIMS[dim] + ' ' + FILTER_OPS[op] + ' ', R.el('code', null, unescValues(rest).join(' or ')));
      const x = R.el('button', null, '✕');
      x.type = 'button';
      x.setAttribute('aria-label', 'Remove the filter ' + f);
      x.addEventListener('click', () => setFilters(state.filters.filter((g) => g !== f)));
      chip.append(' ', x);
      return chip;
    }));
  }

  function setFilters(fs) {
    state.filters = fs;
    state.offsets = {};
    showChips();
    load();
  }

  // addFilter adds f (once); a row picked in a panel adds its is-filter.
  function addFilter(f) {
    if (!FILTER.test(f) || state.filters.includes(f) || state.filters.length >= 10) return;
    setFilters([...state.filters, f]);
  }

  function pickPage(page) {
    state.page = page;
    state.offsets = {};
    $('filter-page').textContent = page;
    $('filter').hidden = false;
    load();
  }

  // enter checks the token with the cheapest call (which also tells the
  // site's time zone) and opens the dashboard.
  async function enter() {
    let live;
    try {
      live = await stats('realtime', { first_day: 1 });
    } catch (e) {
      if (e.status === 401) return unauthorised();
      $(state.share ? 'error' : 'signin-error').textContent = 'The stats API did not answer: ' + e.message;
      if (!state.share) show('signin');
      return;
    }
    // Kept only once the API took it: a mistyped token never lands in
    // sessionStorage, and a reload does not retry it.
    state.verified = true;
    if (!state.share) sessionStorage.setItem(storeKey, state.token);
    state.tz = live.timezone || 'UTC';
    state.firstDay = live.first_day || '';
    R.live(live, $);
    show('dash');
    fitInterval(range().span, state.interval !== '');
    clearInterval(state.live);
    state.live = setInterval(poll, LIVE_MS);
    await load();
  }

  function show(what) {
    $('signin').hidden = what !== 'signin';
    $('dash').hidden = what !== 'dash';
    $('share-invalid').hidden = what !== 'share-invalid';
    $('owner-actions').hidden = what !== 'dash' || state.share;
    if (what !== 'dash') $('share-panel').hidden = $('count-panel').hidden = true;
    if (what !== 'dash') document.body.dataset.state = what;
  }

  // unauthorised handles a 401: a token refused at sign-in was mistyped; one
  // that worked until now was rotated or the site removed, so say that.
  function unauthorised() {
    clearInterval(state.live);
    state.gen++;
    if (state.share) return show('share-invalid');
    signOut(state.verified
      ? 'Signed out: the token for ' + site + ' no longer works (it was rotated or revoked). Sign in with the current token.'
      : 'That token is not valid for ' + site + '.');
  }

  function signOut(msg) {
    sessionStorage.removeItem(storeKey);
    state.token = '';
    state.verified = false;
    clearInterval(state.live);
    state.gen++;
    $('token').value = '';
    $('signin-error').textContent = msg || '';
    show('signin');
  }

  async function share(method) {
    $('share-msg').textContent = '';
    try {
      const d = await call(method, '/share');
      if (method === 'DELETE') {
        $('share-link').hidden = true;
        $('share-url').value = '';
        $('share-msg').textContent = 'Link revoked: it no longer opens this dashboard.';
        return;
      }
      const token = d.token || d.share_token;
      const link = d.url ? new URL(d.url, location.origin).href
        : `${location.origin}/dashboard/${encodeURIComponent(site)}#share=${encodeURIComponent(token)}`;
      $('share-url').value = link;
      $('share-link').hidden = false;
      $('share-msg').textContent = 'Link ready. Anyone who has it can read this dashboard until you revoke it.';
    } catch (e) {
      $('share-msg').textContent = (e.status === 404 && method === 'DELETE') ? 'There is no link to revoke.' : 'Failed: ' + e.message;
    }
  }

  // csvOf reads one card's CSV for the view: the API's own, without the
  // page and filters where that breakdown is the whole site's.
  function csvOf(what, extra) {
    const params = { ...baseParams(), ...extra, format: 'csv' };
    if (extra.by && state.wholeSite[extra.by]) { delete params.page; delete params.filter; }
    return call('GET', '/stats/' + what, params, 'text/csv');
  }

  // save hands blob to the browser as a download named name.
  function save(blob, name) {
    const a = R.el('a');
    a.href = URL.createObjectURL(blob);
    a.download = name;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  }

  async function download(what, extra) {
    try {
      const text = await csvOf(what, extra);
      const r = range();
      save(new Blob([text], { type: 'text/csv' }), `${site}-${extra.by || what}${extra.metric ? '-' + extra.metric : ''}-${localDay(r.from)}-${localDay(r.to)}.csv`);
    } catch (e) {
      if (e.status === 401) return unauthorised();
      $('error').textContent = 'CSV export failed: ' + e.message;
    }
  }

  // downloadAll saves every card's CSV for the view in one ZIP file, as
  // Plausible and Umami offer: the summary, the chart's figure and every
  // breakdown (its first 1,000 rows), each the API's own CSV.
  async function downloadAll() {
    const files = [['summary', 'summary', {}], ['timeseries', 'timeseries', seriesParams({ interval: state.interval })],
      ...TABS.concat(PANELS).map(([by]) => [by, 'breakdown', { by, limit: 1000 }])];
    try {
      const texts = await Promise.all(files.map(([, what, extra]) => csvOf(what, extra)));
      const r = range();
      save(zip(files.map(([name], i) => [name + '.csv', texts[i]])), `${site}-${localDay(r.from)}-${localDay(r.to)}.zip`);
    } catch (e) {
      if (e.status === 401) return unauthorised();
      $('error').textContent = 'Export failed: ' + e.message;
    }
  }

  // zip packs [name, text] files into a ZIP archive, stored uncompressed
  // (a few kilobytes of CSV each): local headers, then the central
  // directory and its end record (APPNOTE 4.3), names in UTF-8 (flag 11).
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  function zip(files) {
    const enc = new TextEncoder(), parts = [], central = [];
    let offset = 0;
    const header = (sig, fields) => {
      const b = new DataView(new ArrayBuffer(4 + fields.reduce((n, [size]) => n + size, 0)));
      b.setUint32(0, sig, true);
      let at = 4;
      for (const [size, v] of fields) { if (size === 2) b.setUint16(at, v, true); else b.setUint32(at, v, true); at += size; }
      return new Uint8Array(b.buffer);
    };
    for (const [name, text] of files) {
      const n = enc.encode(name), data = enc.encode(text);
      let crc = 0xffffffff;
      for (const x of data) crc = crcTable[(crc ^ x) & 0xff] ^ (crc >>> 8);
      crc = (crc ^ 0xffffffff) >>> 0;
      const common = [[2, 20], [2, 0x0800], [2, 0], [2, 0], [2, 0x21], [4, crc], [4, data.length], [4, data.length], [2, n.length], [2, 0]];
      const local = header(0x04034b50, common);
      parts.push(local, n, data);
      central.push(header(0x02014b50, [[2, 20], ...common, [2, 0], [2, 0], [2, 0], [4, 0], [4, offset]]), n);
      offset += local.length + n.length + data.length;
    }
    const size = central.reduce((s, p) => s + p.length, 0);
    return new Blob([...parts, ...central, header(0x06054b50, [[2, 0], [2, 0], [2, files.length], [2, files.length], [4, size], [4, offset], [2, 0]])],
      { type: 'application/zip' });
  }

  // panelBody fills a panel's table head and pager from the template's
  // body, for the breakdown by, titled title.
  function panelBody(body, by, title, heads) {
    const tr = body.querySelector('thead tr');
    tr.append(...heads.map((h) => { const th = R.el('th', 'n', h); th.scope = 'col'; return th; }));
    const turn = (dir) => {
      state.offsets[by] = Math.max(0, (state.offsets[by] || 0) + dir * 10);
      loadPanel(by, state.gen).catch((e) => { if (e.status === 401) unauthorised(); else $('error').textContent = e.message; });
    };
    body.querySelector('.prev').setAttribute('aria-label', 'Previous ' + title.toLowerCase());
    body.querySelector('.next').setAttribute('aria-label', 'Next ' + title.toLowerCase());
    body.querySelector('.prev').addEventListener('click', () => turn(-1));
    body.querySelector('.next').addEventListener('click', () => turn(1));
    panels[by] = body;
  }

  // buildPanels makes the cards (CARDS): a tab and a tab panel per
  // breakdown, as the WAI-ARIA tabs pattern has them (arrow keys, Home and
  // End move between the tabs; only the selected one is in the tab order);
  // a card of one breakdown has its title instead of tabs. Each card's
  // head folds it away (shown on narrow screens, where the cards stack).
  function buildPanels() {
    const tpl = $('panel-tpl');
    for (const [card, title, bys] of CARDS) {
      const sec = $(card), h = sec.querySelector('h2'), list = sec.querySelector('[role=tablist]');
      Object.assign(h, { id: 'h-' + card, textContent: title });
      sec.setAttribute('aria-labelledby', h.id);
      list.setAttribute('aria-labelledby', h.id);
      if (bys.length > 1) h.className = 'vh';
      else list.remove();
      const fold = R.el('button', 'fold', '▾');
      fold.type = 'button';
      fold.setAttribute('aria-expanded', 'true');
      fold.setAttribute('aria-label', 'Fold ' + title);
      fold.addEventListener('click', () => {
        const folded = sec.classList.toggle('folded');
        fold.setAttribute('aria-expanded', String(!folded));
      });
      sec.querySelector('.card-head').append(fold);
      const tabs = bys.map((by) => {
        const body = by === 'map' ? R.el('div', 'body map') : tpl.content.querySelector('.body').cloneNode(true);
        Object.assign(body, { id: 'panel-' + by, tabIndex: 0 });
        body.dataset.by = by;
        const t = tabOf[by];
        if (by !== 'map') {
          body.querySelector('th').textContent = t ? 'Page' : PANELS.find((p) => p[0] === by)[2];
          if (by === 'entry_page' || by === 'exit_page') body.querySelector('.note').textContent = 'Whole site: entry and exit pages rank all of the site\'s visits.';
          panelBody(body, by, titleOf[by], t ? t[3] : ['Views', 'Uniques']);
        }
        sec.append(body);
        if (bys.length === 1) return null;
        const tab = R.el('button', null, titleOf[by]);
        Object.assign(tab, { type: 'button', id: 'tab-' + by });
        tab.setAttribute('role', 'tab');
        tab.setAttribute('aria-controls', body.id);
        tab.addEventListener('click', () => selectTab(by));
        body.setAttribute('role', 'tabpanel');
        body.setAttribute('aria-labelledby', tab.id);
        list.append(tab);
        return tab;
      });
      if (bys.length > 1) {
        list.addEventListener('keydown', (ev) => {
          const i = bys.indexOf(state.tabs[card]), n = bys.length;
          const to = { ArrowRight: (i + 1) % n, ArrowLeft: (i + n - 1) % n, Home: 0, End: n - 1 }[ev.key];
          if (to == null) return;
          ev.preventDefault();
          selectTab(bys[to]);
          tabs[to].focus();
        });
      }
      const shown = () => (state.tabs[card] === 'map' ? 'country' : state.tabs[card]);
      sec.querySelector('.csv').addEventListener('click', () => download('breakdown', { by: shown(), limit: 1000 }));
      const more = R.el('button', 'more', 'Details');
      more.type = 'button';
      more.setAttribute('aria-label', title + ': every value, full names, search');
      more.addEventListener('click', () => openDetail(shown()));
      sec.querySelector('.csv').before(more);
      selectTab(state.tabs[card], true);
    }
  }

  // selectTab shows one tab of its card; a tab the user picked is a
  // history entry (quiet: the URL's own, shown again).
  function selectTab(by, quiet) {
    const card = cardOf[by];
    state.tabs[card] = by;
    if (state.urlReady && !quiet) remember(false);
    if (by === 'map' && state.urlReady) loadMap(state.gen);
    if (by === 'channel' && state.urlReady) loadPanel(by, state.gen).catch((e) => { $('error').textContent = e.message; });
    for (const b of CARDS.find((c) => c[0] === card)[2]) {
      const on = b === by, tab = $('tab-' + b);
      if (tab) {
        tab.setAttribute('aria-selected', String(on));
        tab.tabIndex = on ? 0 : -1;
      }
      $('panel-' + b).hidden = !on;
      if (on) $(card).querySelector('.csv').setAttribute('aria-label', titleOf[b] + ' as CSV');
    }
  }


  // Keyboard shortcuts (the ? list, as Plausible's): a letter picks a
  // range, the arrows step it, Esc closes the list or clears the page
  // filter. Keys typed into a field (a radio takes its arrows), or with a
  // modifier, are the field's.
  const KEYS = { r: 'realtime', d: 'today', e: 'yesterday', h: '24h', w: '7d', g: '28d', f: '30d', n: '91d', m: 'month', p: 'lastmonth', y: 'year', l: '12mo', a: 'all', c: 'custom' };
  function onKey(ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey || ev.defaultPrevented || $('dash').hidden) return;
    const t = ev.target;
    if (ev.key !== 'Escape' && t && (t.isContentEditable || /^(INPUT|SELECT|TEXTAREA)$/.test(t.tagName))) return;
    if (ev.key === '?') showKeys($('keys').hidden);
    else if (ev.key === 'Escape') {
      if (!$('detail').hidden) closeDetail();
      else if (!$('keys').hidden) showKeys(false);
      else if (state.page || state.filters.length) { state.page = ''; $('filter').hidden = true; setFilters([]); }
      else return;
    } else if (ev.key === 'ArrowLeft' || ev.key === 'ArrowRight') step(ev.key === 'ArrowLeft' ? -1 : 1);
    else if (KEYS[ev.key.toLowerCase()]) {
      const radio = document.querySelector(`input[name=range][value="${KEYS[ev.key.toLowerCase()]}"]`);
      radio.checked = true;
      radio.dispatchEvent(new Event('change'));
    } else return;
    ev.preventDefault();
  }

  function showKeys(open) {
    $('keys').hidden = !open;
    $('keys-open').setAttribute('aria-expanded', String(open));
    if (open) $('keys-close').focus();
  }

  function wire() {
    $('signin-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      state.token = $('token').value.trim();
      $('signin-error').textContent = '';
      if (!state.token) return;
      enter();
    });
    $('sign-out').addEventListener('click', () => signOut());
    $('share-toggle').addEventListener('click', () => {
      const open = $('share-panel').hidden;
      $('share-panel').hidden = !open;
      $('share-toggle').setAttribute('aria-expanded', String(open));
    });
    $('count-toggle').addEventListener('click', () => {
      const open = $('count-panel').hidden;
      $('count-panel').hidden = !open;
      $('count-toggle').setAttribute('aria-expanded', String(open));
      if (open) openSettings();
    });
    $('engaged-after').replaceChildren(...ENGAGED_AFTER.map((s) => {
      const o = R.el('option', null, threshold(s));
      o.value = String(s);
      return o;
    }));
    $('count-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      saveSettings();
    });
    $('share-create').addEventListener('click', () => share('POST'));
    $('share-revoke').addEventListener('click', () => share('DELETE'));
    $('share-copy').addEventListener('click', () => {
      $('share-url').select();
      if (navigator.clipboard) navigator.clipboard.writeText($('share-url').value).catch(() => {});
    });
    for (const radio of document.querySelectorAll('input[name=range]')) {
      radio.addEventListener('change', () => {
        $('custom').hidden = radio.value !== 'custom';
        if (radio.value === 'custom') {
          const r = range();
          $('from').value = $('from').value || localDay(r.from);
          $('to').value = $('to').value || ymd(new Date(), state.tz);
          return; // applied with its button
        }
        state.range = radio.value;
        state.offsets = {};
        fitInterval(range().span, false);
        load();
      });
    }
    $('custom-apply').addEventListener('click', () => {
      const from = $('from').value, to = $('to').value;
      if (!from || !to || from > to) {
        $('error').textContent = 'Pick a start date on or before the end date.';
        return;
      }
      Object.assign(state, { range: 'custom', from, to, offsets: {} });
      fitInterval(days(from, to), true);
      load();
    });
    $('interval').addEventListener('change', () => { state.interval = $('interval').value; load(); });
    $('compare').addEventListener('change', () => { state.compare = $('compare').value; load(); });
    $('zip').addEventListener('click', downloadAll);
    $('metric').addEventListener('change', () => pickMetric($('metric').value));
    $('rejected-reason').addEventListener('change', () => {
      state.reason = R.rejected(state.rejected, $('rejected-reason').value, $);
    });
    $('detail-close').addEventListener('click', closeDetail);
    $('detail-search').addEventListener('input', () => { detail.offset = 0; loadDetail(); });
    $('detail').querySelector('.prev').addEventListener('click', () => { detail.offset = Math.max(0, detail.offset - 20); loadDetail(); });
    $('detail').querySelector('.next').addEventListener('click', () => { detail.offset += 20; loadDetail(); });
    $('filter-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      const vals = $('f-val').value.split('|').map((v) => v.trim()).filter(Boolean);
      if (!vals.length) return;
      addFilter($('f-dim').value + $('f-op').value + vals.map(escValue).join('|'));
      $('f-val').value = '';
      $('add-filter').open = false;
    });
    $('filter-clear').addEventListener('click', () => {
      state.page = '';
      state.offsets = {};
      $('filter').hidden = true;
      load();
    });
    document.querySelector('.csv[data-csv=timeseries]').addEventListener('click', () => download('timeseries', seriesParams({ interval: state.interval })));
    let t = 0;
    addEventListener('resize', () => { clearTimeout(t); t = setTimeout(R.resize, 150); });
    // A share link opened in a tab that shows the dashboard changes only the
    // fragment: start again as that link.
    addEventListener('hashchange', () => location.reload());
    $('theme').addEventListener('click', () => {
      const next = THEMES[(THEMES.indexOf(document.documentElement.dataset.theme || 'auto') + 1) % THEMES.length];
      localStorage.setItem(themeKey, next);
      applyTheme(next);
      redraw();
    });
    matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => { if (!document.documentElement.dataset.theme) redraw(); });
    $('prev').addEventListener('click', () => step(-1));
    $('next').addEventListener('click', () => step(1));
    $('keys-open').addEventListener('click', () => showKeys(true));
    $('keys-close').addEventListener('click', () => showKeys(false));
    document.addEventListener('keydown', onKey);
    // Back and Forward: the view that entry's URL holds.
    addEventListener('popstate', () => {
      if (!state.urlReady) return;
      readURL();
      showState();
      fitInterval(range().span, state.interval !== '');
      remember(true); // what the URL held, as the controls read it
      if (state.token && $('signin').hidden) load();
    });
    document.addEventListener('visibilitychange', () => { if (!document.hidden) poll(); });
  }

  function start() {
    $('site-name').textContent = site;
    document.title = site + ' · Viewcount';
    // ?theme=light|dark|auto (an embedding page's choice) wins over this
    // browser's; the theme button still changes it.
    const asked = new URLSearchParams(location.search).get('theme'), theme = localStorage.getItem(themeKey);
    applyTheme(THEMES.includes(asked) ? asked : THEMES.includes(theme) ? theme : 'auto');
    buildPanels();
    buildTiles();
    wire();
    readURL();
    showState();
    const m = /(?:^#|&)share=([^&]+)/.exec(location.hash);
    if (m) {
      state.share = true;
      state.token = decodeURIComponent(m[1]);
      $('mode').textContent = 'Shared view · read-only';
      $('mode').hidden = false;
      enter();
      return;
    }
    state.token = sessionStorage.getItem(storeKey) || '';
    state.verified = state.token !== ''; // it worked when it was stored
    if (state.token) enter();
    else show('signin');
  }
  start();
})();

// Viewcount tracker: a view per page load and per SPA navigation. No cookies.
// <script defer src="https://stats.example.com/vc.js" data-site="example.com"></script>
// Per view, once it is sent, an engagement event: the time the page was
// visible and focused, and how far it was scrolled (docs/engagement.md).
// Counts on the page, filled once it has loaded, all with one request:
// <span data-vc-count></span> shows this page's ("12,345 views"), with the
// reader's own view at once; data-vc-count="/other/page" another page's,
// data-vc-label="reads" another word.
// Sends nothing from localhost, 127.0.0.0/8, [::1] or file: pages, nor when
// localStorage.vc_ignore is "true" (to exclude your own visits).
// Served without its whole-line comments (ingest.trimScript).
(function () {
  var s = document.currentScript, d = document, l = location, n = navigator;
  if (!s) return;
  var off = l.protocol == 'file:' || /^(localhost|.*\.localhost|127(\.\d+){3}|\[::1\])$/.test(l.hostname);
  try { off = off || localStorage.getItem('vc_ignore') == 'true'; } catch (_) {}
  var site = s.getAttribute('data-site') || l.hostname;
  // endpoint: the script's origin
  var base = new URL(s.src, l.href).origin;
  var ref = d.referrer, last, tz, pend = [], mine;
  try { tz = !!Intl.DateTimeFormat().resolvedOptions().timeZone; } catch (_) {}
  // Browser facts validators check for automation (see viewcount.Hints).
  var hints = { sw: screen.width, sh: screen.height, lang: (n.languages || []).length,
    tz: !!tz, uad: !!n.userAgentData, sec: !!window.isSecureContext }, drawn;
  // f once the window's outer size is known, which hints then carry: at
  // once if it is, else after the page's first frame (Chromium sizes a
  // cross-site navigation's new document after its scripts may have run,
  // so it often reads 0 x 0 before; docs/invalid-traffic.md), or after 1 s
  // without one. A hidden page draws none: its size, still 0 x 0, is sent
  // as unknown.
  function sized(f) {
    var done, go = function () {
      if (!done) {
        done = 1;
        if (outerWidth || outerHeight || drawn) { hints.ow = outerWidth; hints.oh = outerHeight; }
        f();
      }
    };
    if (outerWidth || outerHeight || d.hidden || !window.requestAnimationFrame) return go();
    requestAnimationFrame(function () { drawn = 1; go(); });
    setTimeout(go, 1e3);
  }
  // The view being measured: its event e, when it was sent (t), its
  // engaged time (ms, counting since at while the page is visible and
  // focused, else at is false), its deepest scroll (sc), and what the last
  // report said (rm, rs). Times by performance.now: monotonic.
  var cur;
  function depth() {
    // (|| 0: a document not laid out yet, 0 / 0)
    if (cur) cur.sc = Math.max(cur.sc, Math.min(100, Math.round((scrollY + innerHeight) / d.documentElement.scrollHeight * 100)) || 0);
  }
  // Adds the time since the last tick; counts on only if go and the page is
  // visible and focused.
  function tick(go) {
    var t = performance.now();
    if (cur) {
      depth();
      if (cur.at) cur.ms += t - cur.at;
      cur.at = go && !d.hidden && d.hasFocus() && t;
    }
  }
  function start(e) {
    cur = { e: e, t: performance.now(), ms: 0, sc: 0 };
    tick(1);
  }
  // The view's engagement so far, unless the last report said as much. The
  // values are cumulative: a lost report loses nothing the next carries.
  // Not after a day, which ingest refuses (validators after an hour).
  function report() {
    tick();
    var c = cur, v = c && c.e, g;
    if (!c) return;
    g = { type: 'engagement', site: site, page: v.page, referrer: v.referrer, id: v.id, host: v.host,
      engaged_ms: Math.round(c.ms), scroll: c.sc, age_ms: Math.round(performance.now() - c.t) };
    if (g.age_ms < 864e5 && (g.engaged_ms !== c.rm || g.scroll !== c.rs)) {
      c.rm = g.engaged_ms;
      c.rs = g.scroll;
      send(g);
    }
  }
  function post(e) {
    return fetch(base + '/v1/events', { method: 'POST', body: JSON.stringify(e), keepalive: true });
  }
  // e by sendBeacon; without it, or when it refuses: a view by the pixel
  // (img-src), an engagement, which the pixel cannot carry, by fetch.
  function send(e) {
    try {
      if (n.sendBeacon && n.sendBeacon(base + '/v1/events', JSON.stringify(e))) {
        // Chromium returns true even when the page's CSP (connect-src) then
        // blocks the beacon: only the violation event below tells.
        pend.push(e);
        setTimeout(function () { var i = pend.indexOf(e); if (i >= 0) pend.splice(i, 1); }, 5e3);
        return;
      }
    } catch (_) {}
    e.type ? window.fetch && post(e).catch(function () {}) : pixel(e);
  }
  function q(k, v) { return k + '=' + encodeURIComponent(v); }
  function rnd() { return Math.random().toString(36).slice(2); }
  function pixel(e) {
    new Image().src = base + '/p.gif?' + q('site', site) + '&' + q('page', e.page) +
      '&' + q('ref', e.referrer) + '&' + q('id', e.id) + '&' + q('host', e.host) + (e.webdriver ? '&wd=1' : '');
  }
  // Whether an element shows this page's count.
  function shows() {
    return [].some.call(d.querySelectorAll('[data-vc-count]'), function (el) {
      var p = el.getAttribute('data-vc-count');
      return !p || p == l.pathname;
    });
  }
  // The reader's own views, for the counts: the stream position (the
  // beacon's answer) of the first view of each page this UTC day, '' while
  // or when unknown. Later views of the day may be that one's duplicates,
  // so only the first is ever shown as the reader's own, and a count that
  // may hold it shows none (api/own.go). Kept in localStorage.vc_own, and
  // only by pages that show counts; at most 100 pages a day; f changes the
  // memory and says whether to keep it. Without storage there is no own view.
  function own(f) {
    try {
      var m = JSON.parse(localStorage.getItem('vc_own')), day = new Date().toISOString().slice(0, 10);
      if (!m || m.d != day) m = { d: day, p: {}, fresh: 1 };
      if (f(m)) { delete m.fresh; localStorage.setItem('vc_own', JSON.stringify(m)); }
      return m;
    } catch (_) {}
  }
  function view() {
    var page = l.pathname, load = !last, first;
    // pushState to the same path: not a new view
    if (off || page === last) return;
    last = page;
    // the previous view's engagement, before this one's
    report();
    cur = 0;
    // The query goes along for its utm_* tags (the rest is dropped unless
    // --keep-query); the id makes a pixel sent after its beacon count once.
    var e = { site: site, page: page + l.search, referrer: ref, id: rnd() + rnd(), webdriver: !!n.webdriver, hints: hints, host: l.hostname };
    // referrer of the next in-app view
    ref = l.origin + page;
    var m = own(function (m) {
      first = !(page in m.p) && (!m.fresh || d.querySelector('[data-vc-count]')) && Object.keys(m.p).length < 100;
      if (first) m.p[page] = '';
      return first;
    });
    if (load && m && shows()) {
      // This page's count waits for the answer: by fetch, which reads it.
      mine = !first ? Promise.resolve(m.p[page]) : !window.fetch ? 0 : new Promise(sized)
        .then(function () { start(e); return post(e); })
        .then(function (r) { return r.json(); })
        .then(function (j) {
          var p = j.position || '';
          own(function (m) { return m.p[page] === '' && (m.p[page] = p); });
          return p;
        // blocked (CSP connect-src) or failed: the pixel
        }, function () { pixel(e); });
      if (first && window.fetch) return;
    }
    sized(function () {
      start(e);
      send(e);
    });
  }
  d.addEventListener('securitypolicyviolation', function (v) {
    // A Report-Only policy blocks nothing: no pixel then. A blocked
    // engagement is dropped: connect-src, which blocked it, blocks fetch
    // too, and the pixel cannot carry it.
    var u = v.blockedURI, e;
    if (pend.length && v.disposition != 'report' && (u == base || u.indexOf(base + '/v1/events') == 0) && !(e = pend.shift()).type) pixel(e);
  });
  d.addEventListener('visibilitychange', function () { d.hidden ? report() : tick(1); });
  addEventListener('pagehide', report);
  // back from the back-forward cache: counting again
  addEventListener('pageshow', function (v) { v.persisted && tick(1); });
  addEventListener('focus', function () { tick(1); });
  // Focus moving into an iframe blurs the window but not the page: the
  // focus is read once the blur is over.
  addEventListener('blur', function () { setTimeout(tick, 0, 1); });
  addEventListener('scroll', depth, { passive: true });
  function fill() {
    var els = [].slice.call(d.querySelectorAll('[data-vc-count]'));
    Promise.resolve(mine).then(function (pos) {
      for (var i = 0; i < els.length; i += 100) (function (part) {
        var pages = part.map(function (el) { return el.getAttribute('data-vc-count') || l.pathname; }),
          u = base + '/v1/sites/' + encodeURIComponent(site) + '/counts';
        // With an own view, POSTed as text/plain: no preflight.
        (pos ? fetch(u, { method: 'POST', body: JSON.stringify({ pages: pages, own: [{ page: l.pathname, position: pos }] }) })
          : fetch(u + '?' + pages.map(function (p) { return q('page', p); }).join('&'))
        ).then(function (r) { return r.json(); }).then(function (j) {
          j.counts.forEach(function (c, i) {
            var v = c.views + (c.own || 0), w = part[i].getAttribute('data-vc-label');
            part[i].textContent = v.toLocaleString() + ' ' + (w || (v == 1 ? 'view' : 'views'));
          });
        }).catch(function () {});
      })(els.slice(i, i + 100));
    });
  }
  // A prerendered page the user never opens is not a view.
  if (d.prerendering) d.addEventListener('prerenderingchange', view, { once: true });
  else view();
  if (window.fetch) {
    if (d.readyState == 'loading') d.addEventListener('DOMContentLoaded', fill);
    else fill();
  }
  var push = history.pushState;
  if (push) {
    history.pushState = function () {
      var r = push.apply(this, arguments);
      view();
      return r;
    };
    addEventListener('popstate', view);
  }
})();

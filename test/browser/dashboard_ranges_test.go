//go:build !race

package browser

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// checkRanges: the ranges beyond 7 and 30 days, ◀ ▶ and the keyboard
// shortcuts (issue 23). E picks yesterday; ◀ steps to the day before, →
// back and again to today, where ▶ stops; M picks the month to date and ←
// the whole month before it, a calendar month; ? opens the list of
// shortcuts and Esc closes it; R shows the last 30 minutes by the minute,
// refreshed on its own; a letter typed while a field has the focus is the
// field's. The chart draws 7 days beside the period before and the same
// days a year before. Each view's calls ask for the dates it shows, and its
// views tile is the stats API's for them. Returns the last load, the
// dashboard back at its default view.
func checkRanges(t *testing.T, b *browser, api statsAPI, dd dashDays, dash, load string) string {
	day := func(n int) string { return dd.today.AddDate(0, 0, n).Format(time.DateOnly) }
	// shows checks the range picked, the dates in the URL, and the views
	// tile against the API's summary for them.
	shows := func(what, rng, from, to string) {
		t.Helper()
		got := evalJS[[]string](t, b, `[document.querySelector('input[name=range]:checked').value, location.search]`)
		q, _ := url.ParseQuery(got[1][min(1, len(got[1])):])
		if got[0] != rng || (rng == "custom" && (q.Get("from") != from || q.Get("to") != to)) {
			t.Errorf("%s: range %s, URL %s; want %s from %s to %s", what, got[0], got[1], rng, from, to)
		}
		var sum struct{ Views uint64 }
		api.json(t, "summary", days(from, to), &sum)
		if v := elemText(t, b, "t-views"); v != strconv.FormatUint(sum.Views, 10) {
			t.Errorf("%s: %s views on the tile, the API's summary from %s to %s says %d", what, v, from, to, sum.Views)
		}
	}
	press := func(key string) {
		t.Helper()
		b.do(t, "press "+key, chromedp.KeyEvent(key))
		load = b.waitLoaded(t, load)
	}
	b.do(t, "focus the page", chromedp.Click(chromedp.ID("site-name")))
	press("e")
	shows("E", "yesterday", day(-1), day(-1))
	b.do(t, "◀", chromedp.Click(chromedp.ID("prev")))
	load = b.waitLoaded(t, load)
	shows("◀ from yesterday", "custom", day(-2), day(-2))
	b.do(t, "focus the page", chromedp.Click(chromedp.ID("site-name")))
	press(kb.ArrowRight)
	shows("→ once", "custom", day(-1), day(-1))
	press(kb.ArrowRight)
	shows("→ twice", "custom", day(0), day(0))
	if !evalJS[bool](t, b, `document.getElementById('next').disabled`) {
		t.Error("at today ▶ is enabled")
	}
	press("m")
	month := time.Date(dd.today.Year(), dd.today.Month(), 1, 0, 0, 0, 0, dd.loc)
	shows("M", "month", month.Format(time.DateOnly), day(0))
	press(kb.ArrowLeft)
	shows("← from the month to date", "custom", month.AddDate(0, -1, 0).Format(time.DateOnly), month.AddDate(0, 0, -1).Format(time.DateOnly))

	// A: all time, from the site's first counted day (the API's
	// realtime first_day); it does not step.
	var rt struct {
		FirstDay string `json:"first_day"`
	}
	api.json(t, "realtime", url.Values{"first_day": {"1"}}, &rt)
	press("a")
	if rt.FirstDay == "" || rt.FirstDay > day(-20) {
		t.Errorf("first_day %q, want on or before the history's first day %s", rt.FirstDay, day(-20))
	}
	shows("A", "all", rt.FirstDay, day(0))
	if !evalJS[bool](t, b, `document.getElementById('prev').disabled && document.getElementById('next').disabled`) {
		t.Error("all time: ◀ or ▶ enabled")
	}

	b.do(t, "?", chromedp.KeyEvent("?"))
	if evalJS[bool](t, b, `document.getElementById('keys').hidden`) {
		t.Error("? did not open the list of shortcuts")
	}
	b.do(t, "Esc", chromedp.KeyEvent(kb.Escape))
	if !evalJS[bool](t, b, `document.getElementById('keys').hidden`) {
		t.Error("Esc did not close the list of shortcuts")
	}
	// Realtime: the last 30 minutes by the minute, drawn again by the live
	// tile's poll (every 10 s) with no click, and no stepping.
	watchCalls(t, b)
	press("r")
	if cs := calls(t, b, "/stats/timeseries"); len(cs) == 0 {
		t.Error("realtime: no timeseries call")
	} else {
		q := cs[len(cs)-1].Query
		from, err1 := time.Parse(time.RFC3339, q.Get("from"))
		to, err2 := time.Parse(time.RFC3339, q.Get("to"))
		if err1 != nil || err2 != nil || to.Sub(from) != 30*time.Minute || q.Get("interval") != "minute" {
			t.Errorf("realtime: timeseries?%s, want 30 minutes by the minute", q.Encode())
		}
	}
	if !evalJS[bool](t, b, `document.getElementById('prev').disabled && document.getElementById('next').disabled`) {
		t.Error("realtime: ◀ or ▶ enabled")
	}
	// The refresh: the live tile's poll, which a tab coming back into view
	// runs at once (no wait on its 10 s timer).
	evalJS[bool](t, b, `document.dispatchEvent(new Event('visibilitychange')), true`)
	load = b.waitLoaded(t, load)

	b.do(t, "w into the interval select", chromedp.Focus(chromedp.ID("interval")), chromedp.KeyEvent("w"))
	if got := evalJS[string](t, b, `document.querySelector('input[name=range]:checked').value`); got != "realtime" {
		t.Errorf("W typed into a select picked the range %s", got)
	}
	// Comparison on the chart: three days beside the three before them
	// (the history's 15 views), then beside the same days a year before;
	// the table's last column is the API's timeseries of that period,
	// bucket for bucket.
	load = pickCustom(t, b, dd.date(3), dd.date(5), load)
	for _, c := range []struct {
		value, name, from, to string
		sum                   int
	}{
		{"previous", "Views, the period before", dd.date(0), dd.date(2), 15},
		{"year", "Views, a year before", dd.d0.AddDate(-1, 0, 3).Format(time.DateOnly), dd.d0.AddDate(-1, 0, 5).Format(time.DateOnly), 0},
		{"weekday", "Views, a year before, same weekdays", dd.d0.AddDate(0, 0, 3-364).Format(time.DateOnly), dd.d0.AddDate(0, 0, 5-364).Format(time.DateOnly), 0},
	} {
		evalJS[bool](t, b, `(s => { s.value = `+jsString(c.value)+`; s.dispatchEvent(new Event('change')); return true; })(document.getElementById('compare'))`)
		load = b.waitLoaded(t, load)
		got := evalJS[[]string](t, b, `[location.search, [...document.querySelectorAll('#chart-data thead th')].map(th => th.textContent).join('|'),
  ...[...document.querySelectorAll('#chart-data tbody tr')].map(tr => tr.lastElementChild.textContent)]`)
		if q, _ := url.ParseQuery(got[0][min(1, len(got[0])):]); q.Get("compare") != c.value || got[1] != "Start|Views|Unique visitors|"+c.name {
			t.Errorf("compare %s: URL %s, chart table head %q", c.value, got[0], got[1])
		}
		var ts struct {
			Buckets []struct{ Views uint64 } `json:"buckets"`
		}
		api.json(t, "timeseries", cloneWith(days(c.from, c.to), "interval", "hour"), &ts)
		var want []string
		sum := 0
		for _, bk := range ts.Buckets {
			want = append(want, strconv.FormatUint(bk.Views, 10))
			sum += int(bk.Views)
		}
		if sum != c.sum {
			t.Errorf("compare %s: the API's timeseries from %s to %s holds %d views, want %d", c.value, c.from, c.to, sum, c.sum)
		}
		if rows := got[2:]; len(rows) != len(want) || fmt.Sprint(rows) != fmt.Sprint(want) {
			t.Errorf("compare %s: the chart's %d compared buckets %v, the API's timeseries from %s to %s: %d %v", c.value, len(rows), rows, c.from, c.to, len(want), want)
		}
	}
	// The tiles and every table compare with the period picked: with the
	// period before, the pages' rows carry its views (the API's
	// previous_views for the same range and comparison) beside theirs.
	evalJS[bool](t, b, `(s => { s.value = 'previous'; s.dispatchEvent(new Event('change')); return true; })(document.getElementById('compare'))`)
	load = b.waitLoaded(t, load)
	var bd struct {
		Rows []struct {
			Value         string
			Views         uint64
			PreviousViews *uint64 `json:"previous_views"`
		}
	}
	api.json(t, "breakdown", cloneWith(days(dd.date(3), dd.date(5)), "by", "page", "compare_from", dd.date(0), "compare_to", dd.date(2)), &bd)
	shown := evalJS[[]string](t, b, `[...document.querySelectorAll('#panel-page tbody tr')].map(tr => tr.cells[0].textContent + ' ' + tr.cells[1].querySelector('.delta').title)`)
	var want []string
	for _, r := range bd.Rows {
		if r.PreviousViews == nil {
			t.Fatalf("the API's rows have no previous_views: %+v", bd.Rows)
		}
		want = append(want, fmt.Sprintf("%s %d views in the previous period", r.Value, *r.PreviousViews))
	}
	if !slices.Equal(shown, want) {
		t.Errorf("pages compared with the period before: %q, want %q", shown, want)
	}
	if got := elemText(t, b, "c-views"); !strings.HasSuffix(got, "vs previous period") && !strings.HasPrefix(got, "no views in") {
		t.Errorf("views tile's change %q", got)
	}
	b.do(t, "back to the default view", chromedp.Navigate(dash))
	return b.waitLoaded(t, "")
}

//go:build !race

package browser

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/viewcount/viewcount/test/apptest"
)

// watchCalls records the stats API calls the page makes from now on (the
// page's own fetch, wrapped), so a test can check their exact queries.
func watchCalls(t *testing.T, b *browser) {
	t.Helper()
	evalJS[bool](t, b, `(() => {
  window.__calls = [];
  if (!window.__fetch) window.__fetch = window.fetch;
  window.fetch = (u, o) => { window.__calls.push({url: String(u), accept: (o && o.headers && o.headers.Accept) || ''}); return window.__fetch(u, o); };
  return true;
})()`)
}

type apiCall struct {
	Path   string
	Query  url.Values
	Accept string
}

// calls returns the stats API calls to path (e.g. "/stats/timeseries")
// since the last watchCalls or calls to that path, and forgets them.
func calls(t *testing.T, b *browser, path string) []apiCall {
	t.Helper()
	raw := evalJS[string](t, b, `(() => {
  const all = window.__calls, mine = [], path = `+jsString(path)+`;
  window.__calls = all.filter(c => { const m = new URL(c.url, location.origin).pathname.endsWith(path); if (m) mine.push(c); return !m; });
  return JSON.stringify(mine);
})()`)
	var all []struct{ URL, Accept string }
	if err := json.Unmarshal([]byte(raw), &all); err != nil {
		t.Fatalf("calls %s: %v", raw, err)
	}
	var out []apiCall
	for _, c := range all {
		u, err := url.Parse(c.URL)
		if err != nil {
			t.Fatalf("call %q: %v", c.URL, err)
		}
		if strings.HasSuffix(u.Path, path) {
			out = append(out, apiCall{u.Path, u.Query(), c.Accept})
		}
	}
	return out
}

func pickRange(t *testing.T, b *browser, value, load string) string {
	t.Helper()
	b.do(t, "range "+value, chromedp.Click(chromedp.CSS(`label:has(input[value="`+value+`"])`)))
	return b.waitLoaded(t, load)
}

func pickCustom(t *testing.T, b *browser, from, to, load string) string {
	t.Helper()
	b.do(t, "custom range "+from+" to "+to,
		chromedp.Click(chromedp.CSS(`label:has(input[value="custom"])`)),
		chromedp.WaitVisible(chromedp.ID("custom")),
		chromedp.SetValue(chromedp.ID("from"), from),
		chromedp.SetValue(chromedp.ID("to"), to),
		chromedp.Click(chromedp.ID("custom-apply")),
	)
	return b.waitLoaded(t, load)
}

// pickInterval chooses an interval as a person does: the select changes
// and says so.
func pickInterval(t *testing.T, b *browser, interval, load string) string {
	t.Helper()
	evalJS[bool](t, b, `(s => { s.value = `+jsString(interval)+`; s.dispatchEvent(new Event('change')); return true; })(document.getElementById('interval'))`)
	return b.waitLoaded(t, load)
}

// chartIs checks the chart's table against want, bucket for bucket.
func chartIs(t *testing.T, b *browser, when, interval string, want [][]string) {
	t.Helper()
	if got := checkInterval(t, b, when, interval, len(want)); !equalRows(got, want) {
		t.Errorf("%s: chart data = %v, want %v", when, got, want)
	}
}

// checkInterval checks the interval shown and asked for, and the number of
// buckets drawn, and returns the chart's table.
func checkInterval(t *testing.T, b *browser, when, interval string, n int) [][]string {
	t.Helper()
	if got := evalJS[string](t, b, `document.getElementById('interval').value`); got != interval {
		t.Errorf("%s: interval %q, want %q", when, got, interval)
	}
	for _, c := range calls(t, b, "/stats/timeseries") {
		if c.Query.Get("interval") != interval {
			t.Errorf("%s: timeseries asked with interval=%s, want %s", when, c.Query.Get("interval"), interval)
		}
	}
	rows := tableRows(t, b, "#chart-data")
	if len(rows) != n {
		t.Errorf("%s: %d buckets, want %d", when, len(rows), n)
	}
	return rows
}

func pageIs(t *testing.T, b *browser, when string, want [][]string, rng string, prevOff, nextOff bool) {
	t.Helper()
	if got := tableRows(t, b, "#panel-page"); !equalRows(got, want) {
		t.Errorf("%s: top pages = %v, want %v", when, got, want)
	}
	got := evalJS[[]string](t, b, `(s => [s.querySelector('.range').textContent, String(s.querySelector('.prev').disabled), String(s.querySelector('.next').disabled), String(s.querySelector('.pager').hidden)])(document.getElementById('panel-page'))`)
	if w := []string{rng, strconv.FormatBool(prevOff), strconv.FormatBool(nextOff), "false"}; !slices.Equal(got, w) {
		t.Errorf("%s: pager (range, previous disabled, next disabled, hidden) = %v, want %v", when, got, w)
	}
}

// downloaded waits for the browser to finish saving path and parses it.
func downloaded(t *testing.T, path string) [][]string {
	t.Helper()
	data := waitDownload(t, path)
	rows, err := csv.NewReader(strings.NewReader(string(data))).ReadAll()
	if err != nil {
		t.Fatalf("download %s: %v\n%s", filepath.Base(path), err, data)
	}
	return rows
}

// waitDownload returns the file the browser downloads to path, once it is
// there (Chromium writes a .crdownload and renames it when complete).
func waitDownload(t *testing.T, path string) []byte {
	t.Helper()
	var data []byte
	apptest.Eventually(t, 30*time.Second, func() string {
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Sprintf("download %s: %v", filepath.Base(path), err)
		}
		data = b
		return ""
	})
	return data
}

//go:build !race

package browser

// What the engagement tiles and the Pages card's tabs must show, from
// the stats API's answers: the API read as the page reads it, and the
// page's number formats (render.js) rewritten here.

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/viewcount/viewcount/test/apptest"
)

// postEvent sends one event to the beacon endpoint as vc.js does, from
// ip with the desktop Firefox the test's pixel views are sent with.
func postEvent(t *testing.T, c *apptest.Client, ip string, ev map[string]any) int {
	t.Helper()
	body, _ := json.Marshal(ev)
	req, _ := http.NewRequest("POST", c.Base+"/v1/events", bytes.NewReader(body))
	req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
	req.Header.Set("X-Forwarded-For", ip)
	req.Header.Set("User-Agent", apptest.FirefoxUA)
	code, _ := c.Do(req)
	return code
}

// statsAPI reads the stats API as the page does, with the site's token.
type statsAPI struct {
	c           *apptest.Client
	site, token string
}

func (a statsAPI) get(t *testing.T, what string, q url.Values) []byte {
	t.Helper()
	req, _ := http.NewRequest("GET", a.c.Base+"/v1/sites/"+a.site+"/stats/"+what+"?"+q.Encode(), nil)
	req.Header.Set("Authorization", "Bearer "+a.token)
	code, body := a.c.Do(req)
	if code != http.StatusOK {
		t.Fatalf("stats %s?%s: %d %s", what, q.Encode(), code, body)
	}
	return body
}

func (a statsAPI) json(t *testing.T, what string, q url.Values, v any) {
	t.Helper()
	if err := json.Unmarshal(a.get(t, what, q), v); err != nil {
		t.Fatalf("stats %s: %v", what, err)
	}
}

func (a statsAPI) csv(t *testing.T, what string, q url.Values) [][]string {
	t.Helper()
	q = cloneWith(q, "format", "csv")
	rows, err := csv.NewReader(strings.NewReader(string(a.get(t, what, q)))).ReadAll()
	if err != nil {
		t.Fatalf("stats %s as CSV: %v", what, err)
	}
	return rows
}

func cloneWith(q url.Values, kv ...string) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = slices.Clone(v)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			out.Del(kv[i])
		} else {
			out.Set(kv[i], kv[i+1])
		}
	}
	return out
}

func days(from, to string) url.Values { return url.Values{"from": {from}, "to": {to}} }

// engFigures is a period's engagement in a summary (docs/stats-api.md).
type engFigures struct {
	Visits        uint64   `json:"visits"`
	BounceRate    *float64 `json:"bounce_rate"`
	VisitDuration *float64 `json:"visit_duration"`
	EngagedViews  uint64   `json:"engaged_views"`
	Reported      uint64   `json:"reported_views"`
	TimeOnPage    *float64 `json:"time_on_page"`
	ScrollDepth   *float64 `json:"scroll_depth"`
}

type engSummary struct {
	engFigures
	EngagedAfter float64    `json:"engaged_after"`
	Previous     engFigures `json:"previous_engagement"`
	Change       struct {
		Visits        *float64 `json:"visits"`
		BounceRate    *float64 `json:"bounce_rate"`
		VisitDuration *float64 `json:"visit_duration"`
		EngagedViews  *float64 `json:"engaged_views"`
		TimeOnPage    *float64 `json:"time_on_page"`
		ScrollDepth   *float64 `json:"scroll_depth"`
	} `json:"engagement_change"`
}

type breakdownRow struct {
	Value         string   `json:"value"`
	Views         uint64   `json:"views"`
	Uniques       uint64   `json:"uniques"`
	TimeOnPage    *float64 `json:"time_on_page"`
	ScrollDepth   *float64 `json:"scroll_depth"`
	Visits        uint64   `json:"visits"`
	BounceRate    *float64 `json:"bounce_rate"`
	VisitDuration *float64 `json:"visit_duration"`
	Exits         uint64   `json:"exits"`
}

// How the page writes numbers (render.js), for the expected texts. JS
// rounds halves up, Go's math.Round away from zero: jsRound is the page's.
func jsRound(x float64) float64 { return math.Floor(x + 0.5) }

const dash = "—"

func count(n uint64) string {
	d := strconv.FormatUint(n, 10)
	for i := len(d) - 3; i > 0; i -= 3 {
		d = d[:i] + "," + d[i:]
	}
	return d
}

func duration(x float64) string {
	sec := int(jsRound(x))
	if sec < 60 {
		return fmt.Sprintf("%ds", sec)
	}
	if m := sec / 60; m < 60 {
		return fmt.Sprintf("%dm %02ds", m, sec%60)
	}
	return fmt.Sprintf("%dh %02dm", sec/3600, sec/60%60)
}

func rate(x float64) string  { return strconv.FormatFloat(jsRound(x*1000)/10, 'f', 1, 64) + "%" }
func depth(x float64) string { return fmt.Sprintf("%d%%", int(jsRound(x))) }
func orDash(x *float64, f func(float64) string) string {
	if x == nil {
		return dash
	}
	return f(*x)
}

// tileWant is what one engagement tile shows.
type tileWant struct{ num, title, change, class string }

const noReports = "No engagement reports in this range: vc.js sends them as a page is hidden or left; the pixel cannot"

// engagementTiles is what the six tiles must show for a summary: the
// figure, "—" with its reason when there is nothing to measure it on, and
// the change (a bounce rate's in points, where a rise is bad news).
func engagementTiles(d engSummary, page string) map[string]tileWant {
	noVisits := "No visits in this range"
	if page != "" {
		noVisits = "No visit entered on this page in this range"
	}
	ptr := func(n uint64) *float64 { x := float64(n); return &x }
	num := func(x float64) string { return count(uint64(x)) }
	type tile struct {
		id            string
		cur, prev, ch *float64
		measured      [2]bool // now, before
		f             func(float64) string
		what          string
		pts, worse    bool
	}
	tiles := []tile{
		{"visits", ptr(d.Visits), ptr(d.Previous.Visits), d.Change.Visits, [2]bool{true, true}, num, "visits", false, false},
		{"bounce", d.BounceRate, d.Previous.BounceRate, d.Change.BounceRate, [2]bool{d.BounceRate != nil, d.Previous.BounceRate != nil}, rate, "visits", true, true},
		{"duration", d.VisitDuration, d.Previous.VisitDuration, d.Change.VisitDuration, [2]bool{d.VisitDuration != nil, d.Previous.VisitDuration != nil}, duration, "visits", false, false},
		{"engaged", ptr(d.EngagedViews), ptr(d.Previous.EngagedViews), d.Change.EngagedViews, [2]bool{d.Reported > 0, d.Previous.Reported > 0}, num, "engaged views", false, false},
		{"top", d.TimeOnPage, d.Previous.TimeOnPage, d.Change.TimeOnPage, [2]bool{d.TimeOnPage != nil, d.Previous.TimeOnPage != nil}, duration, "engagement reports", false, false},
		{"scroll", d.ScrollDepth, d.Previous.ScrollDepth, d.Change.ScrollDepth, [2]bool{d.ScrollDepth != nil, d.Previous.ScrollDepth != nil}, depth, "engagement reports", false, false},
	}
	out := map[string]tileWant{}
	for _, x := range tiles {
		if !x.measured[0] {
			title := noReports
			if x.what == "visits" {
				title = noVisits
			}
			out[x.id] = tileWant{num: dash, title: title}
			continue
		}
		w := tileWant{num: x.f(*x.cur)}
		isCount := x.id == "visits" || x.id == "engaged"
		switch {
		case x.ch == nil && x.measured[1] && !isCount:
			// No relative change from a 0: what it was instead.
			w.change = x.f(*x.prev) + " in the previous period"
		case x.ch == nil:
			what := x.what
			if x.id == "engaged" && !x.measured[1] {
				what = "engagement reports"
			}
			w.change = "no " + what + " in the previous period"
		default:
			n := jsRound(*x.ch*1000) / 10
			unit := "%"
			if x.pts {
				unit = " pts"
			}
			arrow := "± "
			if n > 0 {
				arrow = "▲ +"
			} else if n < 0 {
				arrow = "▼ −"
			}
			w.change = arrow + strconv.FormatFloat(math.Abs(n), 'f', -1, 64) + unit + " vs previous period"
			if n != 0 {
				w.class = map[bool]string{true: "good", false: "bad"}[(n > 0) != x.worse]
			}
		}
		out[x.id] = w
	}
	return out
}

// checkTiles compares the engagement tiles with the API's summary of q
// (page as the page filter asks for it) and returns that summary.
func checkTiles(t *testing.T, b *browser, api statsAPI, when string, q url.Values) engSummary {
	t.Helper()
	var d engSummary
	api.json(t, "summary", q, &d)
	page := q.Get("page")
	got := evalJS[map[string][]string](t, b, `Object.fromEntries(['visits','bounce','duration','engaged','top','scroll'].map(id => {
  const n = document.getElementById('t-' + id), c = document.getElementById('c-' + id);
  return [id, [n.textContent, n.title, c.textContent, Array.from(c.classList).filter(k => k !== 'change').join(' ')]];
}))`)
	for id, w := range engagementTiles(d, page) {
		if g := got[id]; !slices.Equal(g, []string{w.num, w.title, w.change, w.class}) {
			t.Errorf("%s: tile %s (figure, title, change, class) = %q, want %q (summary %+v)", when, id, g, []string{w.num, w.title, w.change, w.class}, d)
		}
	}
	subs := map[string]string{
		"s-engaged": fmt.Sprintf("≥ %s s engaged, of %s measured", strconv.FormatFloat(d.EngagedAfter, 'f', -1, 64), count(d.Reported)),
		"s-top":     "median of " + count(d.Reported) + " measured views",
		"s-visits":  map[bool]string{true: "that entered on this page", false: ""}[page != ""],
	}
	for id, want := range subs {
		if got := elemText(t, b, id); got != want {
			t.Errorf("%s: #%s = %q, want %q", when, id, got, want)
		}
	}
	return d
}

// panelRows is what a table of a card but the Pages card shows for the
// API's breakdown of q: each value with its views and uniques.
func (a statsAPI) panelRows(t *testing.T, q url.Values) [][]string {
	t.Helper()
	var d struct{ Rows []breakdownRow }
	a.json(t, "breakdown", q, &d)
	out := [][]string{}
	for _, r := range d.Rows {
		out = append(out, []string{r.Value, count(r.Views), count(r.Uniques)})
	}
	return out
}

// tabRows is what a tab of the Pages card shows for a breakdown answer.
func tabRows(by string, rows []breakdownRow) [][]string {
	out := [][]string{}
	for _, r := range rows {
		switch by {
		case "page":
			out = append(out, []string{r.Value, count(r.Views), count(r.Uniques), orDash(r.TimeOnPage, duration), orDash(r.ScrollDepth, depth)})
		case "entry_page":
			out = append(out, []string{r.Value, count(r.Visits), orDash(r.BounceRate, rate), orDash(r.VisitDuration, duration)})
		default:
			out = append(out, []string{r.Value, count(r.Exits)})
		}
	}
	return out
}

// checkTabs compares each tab's table with the API's breakdown of q: the
// page ranking filtered to the page as the summary is, entry and exit
// pages always the whole site's (with a note while a page is picked).
// It returns the API's rows by tab.
func checkTabs(t *testing.T, b *browser, api statsAPI, when string, q url.Values) map[string][]breakdownRow {
	t.Helper()
	out := map[string][]breakdownRow{}
	for _, by := range []string{"page", "entry_page", "exit_page"} {
		bq := cloneWith(q, "by", by, "limit", "10")
		if by != "page" {
			bq.Del("page")
		}
		var d struct{ Rows []breakdownRow }
		api.json(t, "breakdown", bq, &d)
		out[by] = d.Rows
		sel := "#panel-" + by
		want := tabRows(by, d.Rows)
		if len(want) == 0 {
			none := map[bool]string{true: "No views in this range", false: "No visits in this range"}[by == "page"]
			want = [][]string{{none}}
		}
		if got := tableRows(t, b, sel); !equalRows(got, want) {
			t.Errorf("%s: tab %s = %q, want the API's %q", when, by, got, want)
		}
		if note := evalJS[bool](t, b, `!document.querySelector('`+sel+` .note').hidden`); note != (by != "page" && q.Get("page") != "") {
			t.Errorf("%s: tab %s: whole-site note shown %v with page %q", when, by, note, q.Get("page"))
		}
		if p := q.Get("page"); p != "" && len(d.Rows) > 0 {
			sel := evalJS[[]string](t, b, `Array.from(document.querySelectorAll('`+sel+` tr.selected td.v')).map(td => td.title)`)
			in := slices.ContainsFunc(d.Rows, func(r breakdownRow) bool { return r.Value == p })
			if in != slices.Equal(sel, []string{p}) {
				t.Errorf("%s: tab %s: rows marked selected %q, want %q alone (listed: %v)", when, by, sel, p, in)
			}
		}
	}
	return out
}

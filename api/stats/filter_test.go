package stats_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	neturl "net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount/api/stats"
	"github.com/viewcount/viewcount/sql/store"
)

// rawView is one valid view of views_raw with its dimensions, by filter
// name: the truth a filtered answer is checked against, filtered here in
// Go, apart from the store's filter parameters.
type rawView struct {
	Page        string    `ch:"page"`
	Source      string    `ch:"source"`
	Referrer    string    `ch:"referrer"`
	UTMSource   string    `ch:"utm_source"`
	UTMMedium   string    `ch:"utm_medium"`
	UTMCampaign string    `ch:"utm_campaign"`
	Browser     string    `ch:"browser"`
	OS          string    `ch:"os"`
	Device      string    `ch:"device"`
	Country     string    `ch:"country"`
	Screen      string    `ch:"screen"`
	Visitor     uint64    `ch:"visitor"`
	Time        time.Time `ch:"time"`
}

var filterDimNames = []string{"page", "source", "referrer", "utm_source", "utm_medium", "utm_campaign", "browser", "os", "device", "country", "screen"}

func (v rawView) dim(d string) string {
	return map[string]string{"page": v.Page, "source": v.Source, "referrer": v.Referrer, "utm_source": v.UTMSource,
		"utm_medium": v.UTMMedium, "utm_campaign": v.UTMCampaign, "browser": v.Browser, "os": v.OS, "device": v.Device,
		"country": v.Country, "screen": v.Screen}[d]
}

// shownAs is how a breakdown names a stored value (docs/stats.md, "Empty
// values").
func shownAs(dim, v string) string {
	if v != "" {
		return v
	}
	switch dim {
	case "referrer":
		return "(direct)"
	case "utm_source", "utm_medium", "utm_campaign":
		return "(none)"
	}
	return "(unknown)"
}

// testFilter is a filter as the test builds it: its text and what it
// passes.
type testFilter struct {
	dim, op string
	values  []string // as shown
}

func (f testFilter) String() string {
	esc := make([]string, len(f.values))
	for i, v := range f.values {
		esc[i] = strings.NewReplacer(`\`, `\\`, "|", `\|`).Replace(v)
	}
	return f.dim + f.op + strings.Join(esc, "|")
}

func (f testFilter) passes(v rawView) bool {
	got := shownAs(f.dim, v.dim(f.dim))
	if f.op == "~" || f.op == "!~" {
		got = v.dim(f.dim) // contains tests the stored value
		any := slices.ContainsFunc(f.values, func(n string) bool {
			return strings.Contains(strings.ToLower(got), strings.ToLower(n))
		})
		return any == (f.op == "~")
	}
	return slices.Contains(f.values, got) == (f.op == "==")
}

// TestFilters: a filtered answer counts exactly the views that pass its
// filters. Property over random filters (every dimension, every operator,
// one to three values taken from the history or cut from its values in
// random case, and the empty values' names), alone (one dimension: read
// from the rollups) and in pairs (two dimensions: page_views), on a UTC
// and a Berlin site: the summary's views are the passing views of
// views_raw, its uniques their distinct visitors (equal when it says
// they are exact, within four of its standard errors otherwise); the day
// timeseries adds up to the summary; and a breakdown by a random
// dimension has, per value, the passing views with that value.
func TestFilters(t *testing.T) {
	hc := histCfg
	hc.Visits = true
	f := newFixtureOf(t, hc, map[string]string{"utc.example": "", "berlin.example": "Europe/Berlin"})
	rnd := rand.New(rand.NewPCG(7, 23))
	cases := 24
	if testing.Short() {
		cases = 12
	}
	for _, site := range []string{"utc.example", "berlin.example"} {
		loc := time.UTC
		if site == "berlin.example" {
			loc = berlin(t)
		}
		from, to := "2026-03-25", "2026-04-01"
		start, _ := time.ParseInLocation(time.DateOnly, from, loc)
		end, _ := time.ParseInLocation(time.DateOnly, to, loc)
		end = end.AddDate(0, 0, 1)
		views := rawViews(t, f.store, site, start, end)
		base := "/v1/sites/" + site + "/stats/"
		r := "from=" + from + "&to=" + to
		for i := range cases {
			fs := []testFilter{randomFilter(rnd, views)}
			switch i % 3 {
			case 1: // another dimension: page_views
				for fs[0].dim == fs[len(fs)-1].dim {
					fs = append(fs[:1], randomFilter(rnd, views))
				}
			case 2: // the same dimension twice: still its rollup rows
				g := randomFilter(rnd, views)
				for g.dim != fs[0].dim || g.op == "~" && fs[0].op == "~" {
					g = randomFilter(rnd, views)
				}
				fs = append(fs, g)
			}
			q := r
			for _, x := range fs {
				q += "&filter=" + neturl.QueryEscape(x.String())
			}
			var pass []rawView
			for _, v := range views {
				if !slices.ContainsFunc(fs, func(x testFilter) bool { return !x.passes(v) }) {
					pass = append(pass, v)
				}
			}
			t.Run(fmt.Sprintf("%s/%s", site, q), func(t *testing.T) {
				checkFiltered(t, f, base, q, fs, pass, rnd)
			})
		}
	}
}

func checkFiltered(t *testing.T, f *fixture, base, q string, fs []testFilter, pass []rawView, rnd *rand.Rand) {
	ff := *f
	ff.t = t
	var sum struct {
		Views, Uniques uint64
		UniquesError   float64 `json:"uniques_error"`
		Filtered       *uint64
		Filters        []string
		NotCounted     []string `json:"not_counted"`
		Visits         *uint64
	}
	ff.getJSON(base+"summary?"+q, &sum)
	if sum.Views != uint64(len(pass)) {
		t.Errorf("summary views %d, want %d", sum.Views, len(pass))
	}
	agreeUniques(t, "summary", sum.Uniques, sum.UniquesError, distinct(pass))
	if len(fs) == 1 && fs[0].dim == "page" && fs[0].op == "==" && len(fs[0].values) == 1 {
		// One page: page=, its rejected events and engagement counted.
		if sum.Filtered == nil || sum.Visits == nil || len(sum.Filters) != 0 {
			t.Errorf("one page: filtered %v visits %v filters %q", sum.Filtered, sum.Visits, sum.Filters)
		}
	} else {
		if sum.Filtered != nil || !slices.Contains(sum.NotCounted, "filtered") {
			t.Errorf("filtered %v not_counted %v: rejected events keep no dimension, so a filtered summary must not count them", sum.Filtered, sum.NotCounted)
		}
		oneDim := !slices.ContainsFunc(fs, func(x testFilter) bool { return x.dim != fs[0].dim })
		if oneDim != (sum.Visits != nil) || oneDim == slices.Contains(sum.NotCounted, "engagement") {
			t.Errorf("one dimension %v: visits %v, not_counted %v", oneDim, sum.Visits, sum.NotCounted)
		}
		if len(sum.Filters) != len(fs) {
			t.Errorf("filters %q, want %d", sum.Filters, len(fs))
		}
	}

	var series struct {
		Buckets []struct{ Views, Uniques uint64 }
	}
	ff.getJSON(base+"timeseries?interval=day&"+q, &series)
	var total uint64
	for _, b := range series.Buckets {
		total += b.Views
		if b.Uniques > b.Views {
			t.Errorf("a bucket with %d uniques for %d views", b.Uniques, b.Views)
		}
	}
	if total != sum.Views {
		t.Errorf("day buckets add up to %d views, the summary %d", total, sum.Views)
	}

	by := filterDimNames[rnd.IntN(len(filterDimNames))]
	var bd struct {
		Rows []struct {
			Value          string
			Views, Uniques uint64
		}
		TotalValues  uint64  `json:"total_values"`
		UniquesError float64 `json:"uniques_error"`
	}
	ff.getJSON(base+"breakdown?by="+by+"&limit=1000&"+q, &bd)
	want := map[string][]rawView{}
	for _, v := range pass {
		k := shownAs(by, v.dim(by))
		want[k] = append(want[k], v)
	}
	if bd.TotalValues != uint64(len(want)) && len(want) > 0 {
		t.Errorf("by=%s: total_values %d, want %d", by, bd.TotalValues, len(want))
	}
	for _, row := range bd.Rows {
		if row.Views != uint64(len(want[row.Value])) {
			t.Errorf("by=%s %q: views %d, want %d", by, row.Value, row.Views, len(want[row.Value]))
		}
		agreeUniques(t, "by="+by+" "+row.Value, row.Uniques, bd.UniquesError, distinct(want[row.Value]))
		delete(want, row.Value)
	}
	if len(want) > 0 {
		t.Errorf("by=%s: values missing: %d", by, len(want))
	}
}

func agreeUniques(t *testing.T, what string, got uint64, relErr float64, want int) {
	t.Helper()
	if relErr == 0 && got != uint64(want) || math.Abs(float64(got)-float64(want)) > 4*relErr*float64(want)+0.5 && relErr > 0 {
		t.Errorf("%s: uniques %d, want %d (error %.4f)", what, got, want, relErr)
	}
}

func distinct(vs []rawView) int {
	seen := map[uint64]bool{}
	for _, v := range vs {
		seen[v.Visitor] = true
	}
	return len(seen)
}

func rawViews(t *testing.T, st store.Store, site string, from, to time.Time) []rawView {
	t.Helper()
	rows, err := store.Select[rawView](t.Context(), st, `
		SELECT page, toString(ref_source) AS source, ref_host AS referrer, toString(utm_source) AS utm_source,
			toString(utm_medium) AS utm_medium, utm_campaign, toString(browser) AS browser, toString(os) AS os,
			toString(device) AS device, toString(country) AS country, toString(screen) AS screen, visitor,
			toDateTime(time, 'UTC') AS time
		FROM views_raw
		WHERE site = {site:String} AND verdict = 'valid' AND kind = 0
		  AND time >= {from:DateTime('UTC')} AND time < {to:DateTime('UTC')}`,
		store.Params{"site": site, "from": from.UTC().Format(time.DateTime), "to": to.UTC().Format(time.DateTime)})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 1000 {
		t.Fatalf("%s: %d valid views", site, len(rows))
	}
	return rows
}

// randomFilter draws a filter from the values views hold.
func randomFilter(rnd *rand.Rand, views []rawView) testFilter {
	dim := filterDimNames[rnd.IntN(len(filterDimNames))]
	ops := []string{"==", "!=", "~", "!~"}
	f := testFilter{dim: dim, op: ops[rnd.IntN(len(ops))]}
	for range 1 + rnd.IntN(3) {
		v := views[rnd.IntN(len(views))].dim(dim)
		switch {
		case f.op == "==" || f.op == "!=":
			v = shownAs(dim, v)
		case v == "":
			v = "e" // any needle: contains needs one
		default: // a piece of a value, in random case
			i := rnd.IntN(len(v))
			v = v[i:min(len(v), i+1+rnd.IntN(3))]
			if rnd.IntN(2) == 0 {
				v = strings.ToUpper(v)
			}
			if strings.TrimSpace(v) == "" || !isText(v) {
				v = "e"
			}
		}
		f.values = append(f.values, v)
	}
	return f
}

func isText(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || r == 0xfffd })
}

// TestFilterPassingAll: a filter every view passes gives the site's own
// numbers, engagement included: the union of every value's rows is the
// site's (views add; sketches of a partition merge to the whole's).
func TestFilterPassingAll(t *testing.T) {
	hc := histCfg
	hc.Visits = true
	f := newFixtureOf(t, hc, map[string]string{"utc.example": ""})
	type sumJSON struct {
		Views, Uniques, Visits uint64
		EngagedViews           uint64   `json:"engaged_views"`
		BounceRate             *float64 `json:"bounce_rate"`
		TimeOnPage             *float64 `json:"time_on_page"`
	}
	base := "/v1/sites/utc.example/stats/summary?from=2026-03-25&to=2026-04-01"
	var site sumJSON
	f.getJSON(base, &site)
	if site.Visits == 0 || site.TimeOnPage == nil {
		t.Fatalf("the history has no engagement: %+v", site)
	}
	for _, dim := range filterDimNames {
		var got sumJSON
		f.getJSON(base+"&filter="+dim+"!~"+neturl.QueryEscape("\x7e\x7e\x7enothing"), &got)
		if got.Views != site.Views || got.Uniques != site.Uniques || got.EngagedViews != site.EngagedViews ||
			*got.TimeOnPage != *site.TimeOnPage {
			t.Errorf("%s!~nothing: %+v, the site's %+v", dim, got, site)
		}
		if dim != "page" && (got.Visits != site.Visits || *got.BounceRate != *site.BounceRate) {
			t.Errorf("%s!~nothing: visits %d bounce %v, the site's %d %v", dim, got.Visits, *got.BounceRate, site.Visits, *site.BounceRate)
		}
	}
}

// TestFilterRefused: a bad filter is a 400 naming the filter and what is
// wrong with it; a filter where it cannot apply says why.
func TestFilterRefused(t *testing.T) {
	f := newFixture(t)
	base := "/v1/sites/utc.example/stats/"
	for _, c := range []struct{ path, want string }{
		{"summary?filter=cuntry==DE", `unknown dimension \"cuntry\"`},
		{"summary?filter=country", "no operator after country"},
		{"summary?filter=country=DE", "no operator after country"},
		{"summary?filter=country==", "value 1 is empty"},
		{"summary?filter=country==DE||FR", "value 2 is empty"},
		{"summary?filter==DE", "no dimension"},
		{"summary?filter=country==D%5CE", "a backslash must be followed by"},
		{"summary?filter=country==D%01E", "not UTF-8 text"},
		{"summary?filter=page==" + strings.Repeat("a", 2049), "longer than 2048 bytes"},
		{"summary?filter=page~a&filter=page~b", "a second ~ filter on page"},
		{"summary?filter=entry_page==/a", "entry_page is a visit's"},
		{"summary?" + strings.Repeat("filter=os==Linux&", 11), "11 filters: at most 10"},
		{"summary?filter=os==" + strings.Repeat("a|", 20) + "a", "21 values: at most 20"},
		{"breakdown?by=entry_page&filter=os==Linux", "by=entry_page ranks the site's visits"},
		{"filtered?filter=os==Linux", "rejected events keep no dimension"},
		{"timeseries?metric=visits&filter=os==Linux&filter=country==DE", "with filters on several dimensions only views"},
	} {
		code, body := f.get(base + c.path)
		if code != http.StatusBadRequest || !strings.Contains(body, c.want) || !strings.Contains(body, `"filter: `) && !strings.Contains(body, `"metric: `) {
			t.Errorf("GET %s = %d %s, want 400 with %q", c.path[:min(len(c.path), 80)], code, body, c.want)
		}
	}
}

// TestFilterOnePage: filter=page==P is page=P (the page's own reads, exact
// where they can be), and page= combined with another filter is one more
// filter.
func TestFilterOnePage(t *testing.T) {
	f := newFixture(t)
	base := "/v1/sites/utc.example/stats/summary?from=2026-03-25&to=2026-04-01"
	var pages struct{ Rows []struct{ Value string } }
	f.getJSON("/v1/sites/utc.example/stats/breakdown?by=page&from=2026-03-25&to=2026-04-01", &pages)
	p := pages.Rows[0].Value
	_, a := f.get(base + "&page=" + neturl.QueryEscape(p))
	_, b := f.get(base + "&filter=" + neturl.QueryEscape("page=="+p))
	if a != b {
		t.Errorf("page=%s:\n%s\nfilter=page==%s:\n%s", p, a, p, b)
	}
	var both, filters struct{ Views uint64 }
	f.getJSON(base+"&page="+neturl.QueryEscape(p)+"&filter=os!=Linux", &both)
	f.getJSON(base+"&filter="+neturl.QueryEscape("page=="+p)+"&filter=os!=Linux", &filters)
	if both != filters {
		t.Errorf("page= with a filter %+v, the same as two filters %+v", both, filters)
	}
}

// TestCompare: a summary or breakdown with compare_from and compare_to
// compares with that period: the summary's previous views are that
// period's own summary's, and each breakdown row's previous_views is its
// value's views in that period's own breakdown, with the same filters or
// page (so with every read path: the rollups, one page's page_views, the
// filtered page_views). One bound alone is a 400 naming the other.
func TestCompare(t *testing.T) {
	f := newFixture(t)
	base := "/v1/sites/berlin.example/stats/"
	const cur, prev = "from=2026-03-29&to=2026-04-01", "from=2026-03-24&to=2026-03-27"
	const cmp = "&compare_from=2026-03-24&compare_to=2026-03-27"
	var pages struct{ Rows []struct{ Value string } }
	f.getJSON(base+"breakdown?by=page&"+cur, &pages)
	page := "&page=" + neturl.QueryEscape(pages.Rows[0].Value)
	for _, extra := range []string{"", page, "&filter=os!=Linux", "&filter=browser~fire", "&filter=os!=Linux&filter=country!=DE", page + "&filter=device==desktop"} {
		var sum, other struct {
			Views    uint64
			Previous struct{ Views uint64 }
		}
		f.getJSON(base+"summary?"+cur+cmp+extra, &sum)
		f.getJSON(base+"summary?"+prev+extra, &other)
		if sum.Previous.Views != other.Views {
			t.Errorf("%s: previous views %d, the compared period's summary %d", extra, sum.Previous.Views, other.Views)
		}
		for _, by := range []string{"page", "source", "referrer", "browser", "os", "country", "screen"} {
			var now struct {
				Rows []struct {
					Value         string
					PreviousViews *uint64 `json:"previous_views"`
				}
				Previous *struct{ From, To string }
			}
			var then struct {
				Rows []struct {
					Value string
					Views uint64
				}
			}
			f.getJSON(base+"breakdown?by="+by+"&limit=1000&"+cur+cmp+extra, &now)
			f.getJSON(base+"breakdown?by="+by+"&limit=1000&"+prev+extra, &then)
			want := map[string]uint64{}
			for _, r := range then.Rows {
				want[r.Value] = r.Views
			}
			if now.Previous == nil || now.Previous.From != "2026-03-24T00:00:00+01:00" {
				t.Errorf("%s by=%s: previous %+v", extra, by, now.Previous)
			}
			for _, r := range now.Rows {
				if r.PreviousViews == nil || *r.PreviousViews != want[r.Value] {
					t.Errorf("%s by=%s %q: previous_views %v, the compared period's %d", extra, by, r.Value, r.PreviousViews, want[r.Value])
				}
			}
		}
	}
	for q, want := range map[string]string{
		"summary?compare_from=2026-03-24":                       "compare_to: required with compare_from and compare_to",
		"breakdown?by=os&compare_to=2026-03-24":                 "compare_from: required",
		"summary?compare_from=2026-03-24&compare_to=2026-03-20": "compare_from: not before compare_to",
	} {
		if code, body := f.get(base + q); code != http.StatusBadRequest || !strings.Contains(body, want) {
			t.Errorf("%s: %d %s, want 400 %q", q, code, body, want)
		}
	}
}

// testKinds are the source kinds the channel tests give the API (the
// service gives validate/judge.SourceKinds, the referrer list's sections).
var testKinds = map[string]string{"Google": "search", "Bing": "search", "DuckDuckGo": "search", "Reddit": "social",
	"Hacker News": "social", "X": "social", "Facebook": "social", "Gmail": "email", "ChatGPT": "ai"}

var paidMedium = regexp.MustCompile(`^(cpc|ppc|paid.*|cpm|cpv|cpa|display|banner|retargeting)$`)

// channelOf is the channel rules of docs/stats-api.md ("Channels"),
// written again here from the documentation, apart from the query.
func channelOf(v rawView) string {
	medium, kind := strings.ToLower(v.UTMMedium), testKinds[v.Source]
	paid := paidMedium.MatchString(medium)
	switch {
	case paid && kind == "search":
		return "Paid Search"
	case paid && kind == "social":
		return "Paid Social"
	case paid:
		return "Paid Other"
	case regexp.MustCompile(`^(e-?mail|newsletter)`).MatchString(medium) || regexp.MustCompile(`e-?mail|newsletter`).MatchString(strings.ToLower(v.UTMSource)) || kind == "email":
		return "Email"
	case kind == "search" || medium == "organic":
		return "Organic Search"
	case kind == "social" || medium == "social":
		return "Organic Social"
	case kind == "ai":
		return "AI Assistants"
	case v.Referrer != "":
		return "Referral"
	case medium == "" && v.UTMSource == "" && v.UTMCampaign == "":
		return "Direct"
	}
	return "Other"
}

// TestChannels: the channel breakdown counts each view under the channel
// the documented rules give it, alone and with a filter; a channel filter
// counts exactly the views of its channels, in the summary, the day
// series and a breakdown by another dimension.
func TestChannels(t *testing.T) {
	f := newFixtureOf(t, histCfg, map[string]string{"utc.example": ""}, func(c *stats.Config) { c.SourceKinds = testKinds })
	const from, to = "2026-03-25", "2026-04-01"
	start, _ := time.Parse(time.DateOnly, from)
	end, _ := time.Parse(time.DateOnly, to)
	views := rawViews(t, f.store, "utc.example", start, end.AddDate(0, 0, 1))
	byChannel := map[string]int{}
	for _, v := range views {
		byChannel[channelOf(v)]++
	}
	if len(byChannel) < 4 {
		t.Fatalf("the history has %d channels: %v", len(byChannel), byChannel)
	}
	t.Logf("channels: %v", byChannel)
	base := "/v1/sites/utc.example/stats/"
	r := "from=" + from + "&to=" + to
	for _, extra := range []string{"", "&filter=os!=Linux"} {
		var bd struct {
			Rows []struct {
				Value string
				Views uint64
			}
		}
		f.getJSON(base+"breakdown?by=channel&limit=100&"+r+extra, &bd)
		want := map[string]int{}
		for _, v := range views {
			if extra == "" || v.OS != "Linux" {
				want[channelOf(v)]++
			}
		}
		got := map[string]int{}
		for _, row := range bd.Rows {
			got[row.Value] = int(row.Views)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("by=channel%s: %v, want %v", extra, got, want)
		}
	}
	for ch := range byChannel {
		q := r + "&filter=" + neturl.QueryEscape("channel=="+ch)
		var sum struct{ Views uint64 }
		f.getJSON(base+"summary?"+q, &sum)
		var series struct{ Buckets []struct{ Views uint64 } }
		f.getJSON(base+"timeseries?interval=day&"+q, &series)
		var total uint64
		for _, b := range series.Buckets {
			total += b.Views
		}
		var bd struct{ Rows []struct{ Views uint64 } }
		f.getJSON(base+"breakdown?by=browser&limit=1000&"+q, &bd)
		var rows uint64
		for _, b := range bd.Rows {
			rows += b.Views
		}
		if n := uint64(byChannel[ch]); sum.Views != n || total != n || rows != n {
			t.Errorf("channel==%s: summary %d, day series %d, browsers %d; want %d", ch, sum.Views, total, rows, n)
		}
	}
}

// TestFirstDay: realtime?first_day=1 names the site's first day with a
// counted view in its zone (the day of the first UTC day holding one), and
// nothing for a site without any; without the parameter it says nothing.
func TestFirstDay(t *testing.T) {
	f := newFixture(t)
	for site, zone := range map[string]*time.Location{"utc.example": time.UTC, "berlin.example": berlin(t)} {
		views := rawViews(t, f.store, site, time.Unix(0, 0), histEnd.Add(time.Hour))
		first := views[0].Time
		for _, v := range views {
			if v.Time.Before(first) {
				first = v.Time
			}
		}
		want := first.UTC().Truncate(24 * time.Hour).In(zone).Format(time.DateOnly)
		var rt struct {
			FirstDay *string `json:"first_day"`
		}
		f.getJSON("/v1/sites/"+site+"/stats/realtime?first_day=1", &rt)
		if rt.FirstDay == nil || *rt.FirstDay != want {
			t.Errorf("%s: first_day %v, want %s", site, rt.FirstDay, want)
		}
		rt.FirstDay = nil
		f.getJSON("/v1/sites/"+site+"/stats/realtime", &rt)
		if rt.FirstDay != nil {
			t.Errorf("%s: first_day %q unasked", site, *rt.FirstDay)
		}
	}
	var rt map[string]any
	f.getJSON("/v1/sites/empty.example/stats/realtime?first_day=1", &rt)
	if _, ok := rt["first_day"]; ok {
		t.Errorf("a site without views: %v", rt)
	}
}

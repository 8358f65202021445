package stats_test

import (
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	neturl "net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount/sql/store/storetest"
)

// TestNumbersAgree: one quantity shows one number (DESIGN.md, invariant
// 7). Found on the dashboard of a generated history: /posts/hello.html
// with 717 views and 722 unique visitors, Hacker News 192 views and 193
// visitors, and the page's tile (717 visitors) disagreeing with its row in
// the pages table (722): the tile read page_rollup's sketch, the row
// dim_rollup's, of another precision.
//
// Property, over generated histories whose visitors are nearly all
// distinct (each view nearly its own visitor, where an estimate meets the
// exact view count), for every stats endpoint and its CSV export, over
// several ranges, for the site and for its pages:
//   - every tile, row and bucket has uniques ≤ views, and uniques ≥ 1
//     exactly when views ≥ 1;
//   - a page's tile, its row in the site's page ranking and its own row
//     with the page filter show the same views and the same uniques, and
//     below 4096 views those uniques are the exact count;
//   - the CSV export says what the JSON answer says;
//   - an empty value is named for what it means: the referrer of direct
//     traffic is "(direct)", as its source is (with the same views), a
//     view without a UTM tag counts under "(none)", and neither dimension
//     ever shows "(unknown)".
//
// Under -short two seeds run, one in each zone; the system lane (LONG in
// the Makefile) runs all four.
func TestNumbersAgree(t *testing.T) {
	seeds := uint64(4)
	if testing.Short() {
		seeds = 2
	}
	for seed := range seeds {
		rnd := rand.New(rand.NewPCG(seed, 20))
		site := fmt.Sprintf("n%d.example", seed)
		zone := []string{"", "Europe/Berlin"}[seed%2]
		hc := storetest.HistoryConfig{
			Events: 8_000 + rnd.IntN(16_000), Days: 2 + rnd.IntN(6), Sites: []string{site},
			End:   time.Date(2026, 6, 10, 14, 30+rnd.IntN(29), 0, 0, time.UTC),
			Pages: 2 + rnd.IntN(20), Visitors: 50_000 + rnd.IntN(1_000_000), Seed: 100 + seed, Batch: 4_000,
		}
		t.Run(fmt.Sprintf("seed=%d/%d events %d days %d pages %d visitors %q", seed, hc.Events, hc.Days, hc.Pages, hc.Visitors, zone), func(t *testing.T) {
			// Each seed has its own store; their queries keep two cores
			// busier together than one after the other.
			t.Parallel()
			f := newFixtureOf(t, hc, map[string]string{site: zone})
			n := numbers{f: f, t: t, site: site, base: "/v1/sites/" + site + "/stats/"}
			loc := time.UTC
			if zone != "" {
				loc = berlin(t)
			}
			start := hc.End.Add(-time.Duration(hc.Days) * 24 * time.Hour)
			// The whole history in the site's days, and a random range of
			// whole and partial hours inside it.
			a := start.Add(time.Duration(rnd.Int64N(int64(hc.End.Sub(start) / 2))))
			b := a.Add(time.Duration(1 + rnd.Int64N(int64(hc.End.Sub(a)))))
			ranges := []string{
				"from=" + start.In(loc).Format(time.DateOnly) + "&to=" + hc.End.In(loc).Format(time.DateOnly),
				"from=" + neturl.QueryEscape(a.Format(time.RFC3339)) + "&to=" + neturl.QueryEscape(b.Format(time.RFC3339)),
			}
			for _, r := range ranges {
				pages := n.pages(r)
				if len(pages) < 2 {
					t.Fatalf("%s: %d pages with views", r, len(pages))
				}
				for _, page := range append([]string{""}, pages...) {
					n.endpoints(r, page)
				}
				n.tileIsRow(r, pages)
				n.emptyValues(r, "")
				n.emptyValues(r, pages[0])
			}
			n.check("realtime", "", "views_5m", "visitors_now")
			if n.pairs < 200 {
				t.Errorf("only %d view and visitor pairs checked", n.pairs)
			}
		})
	}
}

// numbers walks one fixture's answers.
type numbers struct {
	f     *fixture
	t     *testing.T
	site  string
	base  string
	pairs int // views and uniques pairs checked
}

var numberDims = []string{"page", "source", "referrer", "utm_source", "utm_medium", "utm_campaign", "browser", "os", "device", "country", "screen"}

// endpoints checks every answer over range r (a query string) of the site
// (page "") or one page.
func (n *numbers) endpoints(r, page string) {
	q := r
	if page != "" {
		q += "&page=" + neturl.QueryEscape(page)
	}
	n.check("summary?"+q, "", "views", "uniques")
	n.check("summary?"+q, "previous", "previous_views", "previous_uniques")
	n.check("timeseries?interval=day&"+q, "buckets", "views", "uniques")
	// The finer intervals over the end of the history (their caps).
	end := n.f.now.Format(time.RFC3339)
	n.check("timeseries?interval=hour&to="+neturl.QueryEscape(end)+"&from="+neturl.QueryEscape(n.f.now.Add(-7*24*time.Hour).Format(time.RFC3339))+pageParam(page), "buckets", "views", "uniques")
	n.check("timeseries?interval=minute&to="+neturl.QueryEscape(end)+"&from="+neturl.QueryEscape(n.f.now.Add(-24*time.Hour).Format(time.RFC3339))+pageParam(page), "buckets", "views", "uniques")
	for _, by := range numberDims {
		n.check("breakdown?limit=1000&by="+by+"&"+q, "rows", "views", "uniques")
	}
}

func pageParam(page string) string {
	if page == "" {
		return ""
	}
	return "&page=" + neturl.QueryEscape(page)
}

// check reads path as JSON and as CSV: every item under list ("" for the
// answer itself) must have views ≥ uniques, uniques ≥ 1 exactly when
// views ≥ 1, and the CSV rows must carry the same pairs in the columns
// named.
func (n *numbers) check(path, list, viewsCol, uniquesCol string) {
	t := n.t
	t.Helper()
	var ans map[string]any
	n.f.getJSON(n.base+path, &ans)
	var items []map[string]any
	switch list {
	case "":
		items = []map[string]any{ans}
	default:
		v, ok := ans[list]
		if !ok {
			t.Fatalf("%s: no %s in %v", path, list, ans)
		}
		if m, ok := v.(map[string]any); ok {
			items = []map[string]any{m}
			break
		}
		for _, it := range v.([]any) {
			items = append(items, it.(map[string]any))
		}
	}
	jv, ju := viewsCol, uniquesCol
	if list != "" {
		jv, ju = "views", "uniques"
	}
	var pairs [][2]uint64
	for _, it := range items {
		views, uniques := uint64(it[jv].(float64)), uint64(it[ju].(float64))
		pairs = append(pairs, [2]uint64{views, uniques})
		n.agree(fmt.Sprintf("%s: %v", path, it), views, uniques)
	}
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	code, body := n.f.get(n.base + path + sep + "format=csv")
	if code != 200 {
		t.Fatalf("%s as CSV: %d %s", path, code, body)
	}
	recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("%s as CSV: %v %q", path, err, body)
	}
	vi, ui := slices.Index(recs[0], viewsCol), slices.Index(recs[0], uniquesCol)
	if vi < 0 || ui < 0 {
		t.Fatalf("%s as CSV: no %s or %s in %v", path, viewsCol, uniquesCol, recs[0])
	}
	if len(recs)-1 != len(pairs) {
		t.Fatalf("%s as CSV: %d rows, the JSON %d", path, len(recs)-1, len(pairs))
	}
	for i, rec := range recs[1:] {
		views, err1 := strconv.ParseUint(rec[vi], 10, 64)
		uniques, err2 := strconv.ParseUint(rec[ui], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s as CSV: row %v", path, rec)
		}
		n.agree(fmt.Sprintf("%s as CSV: %v", path, rec), views, uniques)
		if [2]uint64{views, uniques} != pairs[i] {
			t.Errorf("%s as CSV: row %v, the JSON says %d views %d uniques", path, rec, pairs[i][0], pairs[i][1])
		}
	}
}

func (n *numbers) agree(what string, views, uniques uint64) {
	n.t.Helper()
	n.pairs++
	switch {
	case uniques > views:
		n.t.Errorf("%s: %d unique visitors, more than its %d views", what, uniques, views)
	case (views > 0) != (uniques > 0):
		n.t.Errorf("%s: %d views, %d unique visitors", what, views, uniques)
	}
}

// pages are the site's pages with views over r, the most viewed first.
func (n *numbers) pages(r string) []string {
	var got breakdown
	n.f.getJSON(n.base+"breakdown?by=page&limit=1000&"+r, &got)
	var out []string
	for _, row := range got.Rows {
		out = append(out, row.Value)
	}
	return out
}

// tileIsRow: a page's tile, its row of the site's ranking and its own row
// with the page filter are one quantity: the same views and uniques.
func (n *numbers) tileIsRow(r string, pages []string) {
	t := n.t
	var ranking breakdown
	n.f.getJSON(n.base+"breakdown?by=page&limit=1000&"+r, &ranking)
	for _, row := range ranking.Rows {
		q := r + "&page=" + neturl.QueryEscape(row.Value)
		var tile summary
		n.f.getJSON(n.base+"summary?"+q, &tile)
		var own breakdown
		n.f.getJSON(n.base+"breakdown?by=page&"+q, &own)
		if len(own.Rows) != 1 || own.Rows[0] != row {
			t.Errorf("%s: page %s: its own row %+v, its row of the ranking %+v", r, row.Value, own.Rows, row)
		}
		if tile.Views != row.Views || tile.Uniques != row.Uniques {
			t.Errorf("%s: page %s: tile %d views %d uniques, row %d views %d uniques", r, row.Value, tile.Views, tile.Uniques, row.Views, row.Uniques)
		}
	}
	if len(ranking.Rows) != len(pages) {
		t.Errorf("%s: %d pages, then %d", r, len(pages), len(ranking.Rows))
	}
	// Below 4096 views a page's visitors are counted, not estimated.
	from, err1 := time.Parse(time.RFC3339, ranking.From)
	to, err2 := time.Parse(time.RFC3339, ranking.To)
	if err1 != nil || err2 != nil {
		t.Fatalf("%s: range %q–%q", r, ranking.From, ranking.To)
	}
	exact := 0
	for _, row := range ranking.Rows {
		if row.Views >= 4096 {
			continue
		}
		exact++
		p := rangeParams(n.site, from, to)
		p["page"] = row.Value
		got := n.f.rows("SELECT count(), uniqExact(visitor) FROM views_raw WHERE site = {site:String} AND page = {page:String} AND verdict = 'valid'"+
			" AND time >= {from:DateTime64(3)} AND time < {to:DateTime64(3)}", p)
		if want := fmt.Sprint(row.Views, row.Uniques); got[0][0]+" "+got[0][1] != want {
			t.Errorf("%s: page %s: %s views and uniques, counted directly %v", r, row.Value, want, got[0])
		}
	}
	if exact == 0 {
		t.Logf("%s: no page under 4096 views", r)
	}
}

// emptyValues: direct traffic has one name in Sources and Referrers, and
// views without a UTM tag are "(none)", never "(unknown)".
func (n *numbers) emptyValues(r, page string) {
	t := n.t
	rows := func(by string) map[string]uint64 {
		var got breakdown
		n.f.getJSON(n.base+"breakdown?limit=1000&by="+by+"&"+r+pageParam(page), &got)
		out := map[string]uint64{}
		for _, row := range got.Rows {
			out[row.Value] = row.Views
		}
		return out
	}
	src, ref := rows("source"), rows("referrer")
	if src["(direct)"] == 0 || ref["(direct)"] != src["(direct)"] {
		t.Errorf("%s page %q: direct traffic: source %d views, referrer %d (referrers %v)", r, page, src["(direct)"], ref["(direct)"], ref)
	}
	for _, by := range []string{"referrer", "utm_source", "utm_medium", "utm_campaign"} {
		got := rows(by)
		if _, ok := got["(unknown)"]; ok {
			t.Errorf("%s page %q: by %s shows (unknown): %v", r, page, by, got)
		}
		if by != "referrer" && got["(none)"] == 0 {
			t.Errorf("%s page %q: by %s: no (none) row for the views without a tag: %v", r, page, by, got)
		}
	}
}

package examples_test

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // hour_of_week's zone, whatever the machine has installed

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/store"
)

// exampleCases computes each example's answer from the events, in Go and
// independently of the SQL: plain loops over the events, no sketches.
func exampleCases(evs []viewcount.Verdict) map[string]exampleCase {
	month := store.Params{"site": siteA, "from": "2026-03-01", "to": "2026-03-31"}
	all := store.Params{"site": siteA, "from": "2026-02-23", "to": "2026-03-15"}
	a := func(from, to string) []viewcount.Verdict { return pick(evs, siteA, from, to) }
	with := func(p store.Params, k, v string) store.Params {
		p = maps.Clone(p)
		p[k] = v
		return p
	}
	return map[string]exampleCase{
		"top_pages_month":        {month, wantTopPages(a("2026-03-01", "2026-03-31"))},
		"page_hourly":            {store.Params{"site": siteA, "page": "/", "from": "2026-03-09", "to": "2026-03-10"}, wantPageHourly(a("2026-03-09", "2026-03-10"), "/", "2026-03-09", 48)},
		"daily_summary":          {all, wantDailySummary(a("2026-02-23", "2026-03-15"))},
		"invalid_by_reason_day":  {month, wantReasonDay(a("2026-03-01", "2026-03-31"))},
		"invalid_share_by_page":  {month, wantInvalidShare(a("2026-03-01", "2026-03-31"))},
		"invalid_audit":          {month, wantAudit(a("2026-03-01", "2026-03-31"))},
		"invalid_by_asn":         {month, wantByASN(a("2026-03-01", "2026-03-31"))},
		"sources":                {month, wantSources(a("2026-03-01", "2026-03-31"))},
		"referrers":              {month, wantReferrers(a("2026-03-01", "2026-03-31"))},
		"campaigns":              {month, wantCampaigns(a("2026-03-01", "2026-03-31"))},
		"page_sources":           {with(month, "page", "/blog/a"), wantPageSources(a("2026-03-01", "2026-03-31"), "/blog/a")},
		"returning_visitors_day": {all, wantReturning(a("2026-02-23", "2026-03-15"))},
		"hour_of_week":           {with(all, "tz", "Europe/Berlin"), wantHourOfWeek(a("2026-02-23", "2026-03-15"), "Europe/Berlin")},
		"page_views_p95":         {all, wantP95(a("2026-02-23", "2026-03-15"))},
		"filtered_share_jump":    {store.Params{"site": siteA, "to": "2026-03-15"}, wantJump(a("2026-03-02", "2026-03-15"), "2026-03-09")},
	}
}

// pick returns site's events on the UTC days from..to (YYYY-MM-DD, both
// included).
func pick(evs []viewcount.Verdict, site, from, to string) []viewcount.Verdict {
	var out []viewcount.Verdict
	for _, e := range evs {
		if d := day(e); e.Site == site && d >= from && d <= to {
			out = append(out, e)
		}
	}
	return out
}

func day(e viewcount.Verdict) string { return e.Time.UTC().Format(time.DateOnly) }

func valid(e viewcount.Verdict) bool { return e.Reason == viewcount.Valid }

// tally is a group's events and distinct visitors.
type tally struct {
	n        uint64
	visitors map[uint64]bool
}

func (t *tally) add(e viewcount.Verdict) {
	if t.visitors == nil {
		t.visitors = map[uint64]bool{}
	}
	t.n++
	t.visitors[e.Visitor] = true
}

func (t *tally) uniq() string { return u(uint64(len(t.visitors))) }

// group tallies the events keep accepts by key.
func group[K comparable](evs []viewcount.Verdict, keep func(viewcount.Verdict) bool, key func(viewcount.Verdict) K) map[K]*tally {
	out := map[K]*tally{}
	for _, e := range evs {
		if keep(e) {
			k := key(e)
			if out[k] == nil {
				out[k] = &tally{}
			}
			out[k].add(e)
		}
	}
	return out
}

func u(n uint64) string { return strconv.FormatUint(n, 10) }

// r4 rounds as ClickHouse's round(x, 4) does a Float64: half to even.
func r4(x float64) float64 { return math.RoundToEven(x*1e4) / 1e4 }

func f(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// byReason prints a count per verdict as sumMap's Map(String, UInt64).
func byReason(evs []viewcount.Verdict, keep func(viewcount.Verdict) bool) string {
	m := map[string]uint64{}
	for _, e := range evs {
		if keep(e) {
			m[string(e.Reason)]++
		}
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("'%s':%d", k, m[k]))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// rank sorts rows by the comparison and keeps the first limit.
func rank[T any](rows []T, limit int, less func(a, b T) int) []T {
	slices.SortFunc(rows, less)
	return rows[:min(len(rows), limit)]
}

func wantTopPages(evs []viewcount.Verdict) [][]string {
	g := group(evs, valid, func(e viewcount.Verdict) string { return e.Page })
	keys := rank(slices.Collect(maps.Keys(g)), 20, func(a, b string) int {
		return cmp.Or(-cmp.Compare(len(g[a].visitors), len(g[b].visitors)), -cmp.Compare(g[a].n, g[b].n), cmp.Compare(a, b))
	})
	var out [][]string
	for _, k := range keys {
		out = append(out, []string{k, g[k].uniq(), u(g[k].n)})
	}
	return out
}

func wantPageHourly(evs []viewcount.Verdict, page, from string, hours int) [][]string {
	g := group(evs, func(e viewcount.Verdict) bool { return valid(e) && e.Page == page },
		func(e viewcount.Verdict) time.Time { return e.Time.UTC().Truncate(time.Hour) })
	start, _ := time.Parse(time.DateOnly, from)
	var out [][]string
	for h := range hours {
		at := start.Add(time.Duration(h) * time.Hour)
		row := []string{at.Format(time.DateTime), "0", "0"}
		if t := g[at]; t != nil {
			row[1], row[2] = u(t.n), t.uniq()
		}
		out = append(out, row)
	}
	return out
}

func wantDailySummary(evs []viewcount.Verdict) [][]string {
	all := group(evs, func(viewcount.Verdict) bool { return true }, day)
	ok := group(evs, valid, day)
	var out [][]string
	for _, d := range slices.Sorted(maps.Keys(all)) {
		v := cmp.Or(ok[d], &tally{})
		filtered := all[d].n - v.n
		out = append(out, []string{d, u(v.n), v.uniq(), u(filtered), f(r4(float64(filtered) / float64(all[d].n)))})
	}
	return out
}

func wantReasonDay(evs []viewcount.Verdict) [][]string {
	type key struct{ day, reason string }
	g := group(evs, func(e viewcount.Verdict) bool { return !valid(e) }, func(e viewcount.Verdict) key { return key{day(e), string(e.Reason)} })
	all := group(evs, func(viewcount.Verdict) bool { return true }, day)
	keys := rank(slices.Collect(maps.Keys(g)), len(g), func(a, b key) int {
		return cmp.Or(cmp.Compare(a.day, b.day), -cmp.Compare(g[a].n, g[b].n), cmp.Compare(a.reason, b.reason))
	})
	var out [][]string
	for _, k := range keys {
		out = append(out, []string{k.day, k.reason, u(g[k].n), g[k].uniq(), f(r4(float64(g[k].n) / float64(all[k.day].n)))})
	}
	return out
}

func wantInvalidShare(evs []viewcount.Verdict) [][]string {
	type row struct {
		page         string
		events, good uint64
		share        float64
	}
	var rows []row
	for page, t := range group(evs, func(viewcount.Verdict) bool { return true }, func(e viewcount.Verdict) string { return e.Page }) {
		if t.n < 20 {
			continue
		}
		good, _ := count(evs, func(e viewcount.Verdict) bool { return e.Page == page && valid(e) }, day)
		rows = append(rows, row{page, t.n, good, r4(float64(t.n-good) / float64(t.n))})
	}
	var out [][]string
	for _, r := range rank(rows, 50, func(a, b row) int {
		return cmp.Or(-cmp.Compare(a.share, b.share), -cmp.Compare(a.events, b.events), cmp.Compare(a.page, b.page))
	}) {
		out = append(out, []string{r.page, u(r.events), u(r.good), f(r.share),
			byReason(evs, func(e viewcount.Verdict) bool { return e.Page == r.page && !valid(e) })})
	}
	return out
}

// count returns how many events keep accepts, and how many distinct
// values of key they have.
func count[K comparable](evs []viewcount.Verdict, keep func(viewcount.Verdict) bool, key func(viewcount.Verdict) K) (n, distinct uint64) {
	seen := map[K]bool{}
	for _, e := range evs {
		if keep(e) {
			n++
			seen[key(e)] = true
		}
	}
	return n, uint64(len(seen))
}

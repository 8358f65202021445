package examples_test

import (
	"cmp"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/viewcount/viewcount"
)

// The answers of the examples that read views_raw and page_views, and of
// the breakdowns; see exampleCases.

func wantAudit(evs []viewcount.Verdict) [][]string {
	g := group(evs, func(e viewcount.Verdict) bool { return !valid(e) }, func(e viewcount.Verdict) uint64 { return e.Network })
	keys := rank(slices.Collect(maps.Keys(g)), 50, func(a, b uint64) int {
		return cmp.Or(-cmp.Compare(g[a].n, g[b].n), cmp.Compare(a, b))
	})
	var out [][]string
	for _, nw := range keys {
		of := func(e viewcount.Verdict) bool { return !valid(e) && e.Network == nw }
		_, uas := count(evs, of, func(e viewcount.Verdict) string { return e.UA })
		dc, _ := count(evs, func(e viewcount.Verdict) bool { return of(e) && e.Datacenter }, day)
		wd, _ := count(evs, func(e viewcount.Verdict) bool { return of(e) && e.Webdriver }, day)
		bad, _ := count(evs, func(e viewcount.Verdict) bool {
			return of(e) && e.Hints.Present && (e.Hints.ScreenW == 0 || e.Hints.Languages == 0)
		}, day)
		var first, last time.Time
		for _, e := range evs {
			if of(e) {
				if first.IsZero() || e.Time.Before(first) {
					first = e.Time
				}
				if e.Time.After(last) {
					last = e.Time
				}
			}
		}
		out = append(out, []string{u(nw), byReason(evs, of), u(g[nw].n), g[nw].uniq(), u(uas), u(dc), u(wd), u(bad),
			first.UTC().Format("2006-01-02 15:04:05.000"), last.UTC().Format("2006-01-02 15:04:05.000")})
	}
	return out
}

func wantByASN(evs []viewcount.Verdict) [][]string {
	g := group(evs, func(e viewcount.Verdict) bool { return !valid(e) }, func(e viewcount.Verdict) uint32 { return e.ASN })
	keys := rank(slices.Collect(maps.Keys(g)), 20, func(a, b uint32) int {
		return cmp.Or(-cmp.Compare(g[a].n, g[b].n), cmp.Compare(a, b))
	})
	var out [][]string
	for _, asn := range keys {
		of := func(e viewcount.Verdict) bool { return !valid(e) && e.ASN == asn }
		dc, _ := count(evs, func(e viewcount.Verdict) bool { return of(e) && e.Datacenter }, day)
		_, networks := count(evs, of, func(e viewcount.Verdict) uint64 { return e.Network })
		out = append(out, []string{u(uint64(asn)), u(g[asn].n), u(dc), u(networks), byReason(evs, of)})
	}
	return out
}

// breakdown ranks the valid views by key: views, distinct visitors; the
// most views first, then by key.
func breakdown[K cmp.Ordered](evs []viewcount.Verdict, limit int, key func(viewcount.Verdict) K) ([]K, map[K]*tally) {
	g := group(evs, valid, key)
	return rank(slices.Collect(maps.Keys(g)), limit, func(a, b K) int {
		return cmp.Or(-cmp.Compare(g[a].n, g[b].n), cmp.Compare(a, b))
	}), g
}

func wantSources(evs []viewcount.Verdict) [][]string {
	keys, g := breakdown(evs, 50, func(e viewcount.Verdict) string { return e.Dims.RefSource })
	total, _ := count(evs, valid, day)
	var out [][]string
	for _, k := range keys {
		out = append(out, []string{k, u(g[k].n), g[k].uniq(), f(r4(float64(g[k].n) / float64(total)))})
	}
	return out
}

func wantReferrers(evs []viewcount.Verdict) [][]string {
	keys, g := breakdown(evs, 50, func(e viewcount.Verdict) string { return cmp.Or(e.Dims.RefHost, "(none)") })
	var out [][]string
	for _, k := range keys {
		out = append(out, []string{k, u(g[k].n), g[k].uniq()})
	}
	return out
}

func wantCampaigns(evs []viewcount.Verdict) [][]string {
	tagged := func(e viewcount.Verdict) bool { return valid(e) && e.UTM != viewcount.UTM{} }
	g := group(evs, tagged, func(e viewcount.Verdict) viewcount.UTM { return e.UTM })
	keys := rank(slices.Collect(maps.Keys(g)), 50, func(a, b viewcount.UTM) int {
		return cmp.Or(-cmp.Compare(g[a].n, g[b].n), cmp.Compare(a.Source, b.Source), cmp.Compare(a.Medium, b.Medium), cmp.Compare(a.Campaign, b.Campaign))
	})
	var out [][]string
	for _, k := range keys {
		_, pages := count(evs, func(e viewcount.Verdict) bool { return tagged(e) && e.UTM == k }, func(e viewcount.Verdict) string { return e.Page })
		out = append(out, []string{k.Source, k.Medium, k.Campaign, u(g[k].n), g[k].uniq(), u(pages)})
	}
	return out
}

func wantPageSources(evs []viewcount.Verdict, page string) [][]string {
	keys, g := breakdown(filter(evs, func(e viewcount.Verdict) bool { return e.Page == page }), 50,
		func(e viewcount.Verdict) string { return e.Dims.RefSource + "\x00" + e.Dims.RefHost })
	var out [][]string
	for _, k := range keys {
		source, host, _ := strings.Cut(k, "\x00") // sorts as source, then host
		out = append(out, []string{source, host, u(g[k].n), g[k].uniq()})
	}
	return out
}

func filter(evs []viewcount.Verdict, keep func(viewcount.Verdict) bool) []viewcount.Verdict {
	var out []viewcount.Verdict
	for _, e := range evs {
		if keep(e) {
			out = append(out, e)
		}
	}
	return out
}

func wantReturning(evs []viewcount.Verdict) [][]string {
	type key struct {
		day     string
		visitor uint64
	}
	times := map[key][]time.Time{}
	for _, e := range filter(evs, valid) {
		k := key{day(e), e.Visitor}
		times[k] = append(times[k], e.Time)
	}
	type daily struct{ visitors, returning, visits uint64 }
	days := map[string]*daily{}
	for k, ts := range times {
		slices.SortFunc(ts, time.Time.Compare)
		visits := uint64(1)
		for i := 1; i < len(ts); i++ {
			if ts[i].Sub(ts[i-1]) > 30*time.Minute {
				visits++
			}
		}
		d := days[k.day]
		if d == nil {
			d = &daily{}
			days[k.day] = d
		}
		d.visitors++
		d.visits += visits
		if visits > 1 {
			d.returning++
		}
	}
	var out [][]string
	for _, k := range slices.Sorted(maps.Keys(days)) {
		d := days[k]
		out = append(out, []string{k, u(d.visitors), u(d.returning), f(r4(float64(d.returning) / float64(d.visitors))), u(d.visits)})
	}
	return out
}

func wantHourOfWeek(evs []viewcount.Verdict, zone string) [][]string {
	loc, err := time.LoadLocation(zone)
	if err != nil {
		panic(err)
	}
	g := group(evs, valid, func(e viewcount.Verdict) [2]int {
		t := e.Time.In(loc)
		return [2]int{(int(t.Weekday())+6)%7 + 1, t.Hour()} // ClickHouse's toDayOfWeek: Monday 1 … Sunday 7
	})
	var out [][]string
	for _, k := range slices.SortedFunc(maps.Keys(g), func(a, b [2]int) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) }) {
		out = append(out, []string{strconv.Itoa(k[0]), strconv.Itoa(k[1]), u(g[k].n), g[k].uniq()})
	}
	return out
}

func wantP95(evs []viewcount.Verdict) [][]string {
	type key struct{ day, page string }
	g := group(evs, valid, func(e viewcount.Verdict) key { return key{day(e), e.Page} })
	perDay := map[string][]uint64{}
	for k, t := range g {
		perDay[k.day] = append(perDay[k.day], t.n)
	}
	var out [][]string
	for _, d := range slices.Sorted(maps.Keys(perDay)) {
		v := perDay[d]
		sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
		var sum uint64
		for _, n := range v {
			sum += n
		}
		at := func(level float64) string { return u(v[int(level*float64(len(v)))]) }
		out = append(out, []string{d, strconv.Itoa(len(v)), at(0.5), at(0.95), u(v[len(v)-1]), u(sum)})
	}
	return out
}

// wantJump's events are the two weeks; thisWeek is the first day of the
// second.
func wantJump(evs []viewcount.Verdict, thisWeek string) [][]string {
	type week struct{ events, filtered uint64 }
	type pageWeeks struct{ this, last week }
	pages := map[string]*pageWeeks{}
	for _, e := range evs {
		p := pages[e.Page]
		if p == nil {
			p = &pageWeeks{}
			pages[e.Page] = p
		}
		w := &p.last
		if day(e) >= thisWeek {
			w = &p.this
		}
		w.events++
		if !valid(e) {
			w.filtered++
		}
	}
	type row struct {
		page               string
		w                  *pageWeeks
		this, last, jumped float64
	}
	var rows []row
	for page, p := range pages {
		if p.this.events < 20 {
			continue
		}
		r := row{page: page, w: p, this: r4(float64(p.this.filtered) / float64(p.this.events))}
		if p.last.events > 0 {
			r.last = r4(float64(p.last.filtered) / float64(p.last.events))
		}
		r.jumped = r4(r.this - r.last)
		rows = append(rows, r)
	}
	var out [][]string
	for _, r := range rank(rows, 20, func(a, b row) int { return cmp.Or(-cmp.Compare(a.jumped, b.jumped), cmp.Compare(a.page, b.page)) }) {
		out = append(out, []string{r.page, u(r.w.this.events), f(r.this), u(r.w.last.events), f(r.last), f(r.jumped)})
	}
	return out
}

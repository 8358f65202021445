package rollup_test

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/viewcount/viewcount"
)

// The visits of TestEngagementRollup, with the deltas the visit stage
// gives them worked out by hand (docs/engagement.md). Visitor A (Firefox
// on Linux, from Google with a newsletter campaign) views /a, reports 6 s
// and 40 %, views /b from the site itself 5 minutes later, reports 30 s
// and 100 % in the next hour and 45 s a minute after (moving /b from
// bucket 15 to 17, its scroll bucket staying), and views /c; a report on
// /c adds nothing (engagement_repeat). Visitor C (Safari on iOS, from
// Reddit) views /b and reports 3 s: a bounce. Visitor D views /d at
// 23:59:50 on the last day of March and reports 25 s after midnight, in
// April: its figures count in March, and it is no bounce. Beside them a
// report of a view never seen (engagement_orphan) and a bot's view.
var (
	day = time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	at  = func(h, m, s int) time.Time {
		return day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(s)*time.Second)
	}
	aDims   = viewcount.Dims{RefHost: "www.google.com", RefSource: "Google", Browser: "Firefox", OS: "Linux", Device: "desktop", Screen: "laptop"}
	aInside = viewcount.Dims{RefSource: "(direct)", Browser: "Firefox", OS: "Linux", Device: "desktop", Screen: "laptop"}
	aUTM    = viewcount.UTM{Source: "nl", Medium: "email", Campaign: "spring"}
	cDims   = viewcount.Dims{RefHost: "www.reddit.com", RefSource: "Reddit", Browser: "Safari", OS: "iOS", Device: "mobile", Screen: "mobile"}
	dDims   = viewcount.Dims{RefSource: "(direct)", Browser: "Chrome", OS: "Windows", Device: "desktop", Screen: "desktop"}
	dView   = time.Date(2026, 3, 31, 23, 59, 50, 0, time.UTC)
)

const engSite = "eng.example"

// engagementVerdicts returns the verdicts in stream order, in two parts
// (each its own batch and feed), with their messages' sequences.
func engagementVerdicts() [][]viewcount.Verdict {
	none := viewcount.VisitDelta{EngagedFrom: -1, EngagedTo: -1, ScrollFrom: -1, ScrollTo: -1}
	n := 0
	v := func(visitor uint64, t time.Time, page string, dims viewcount.Dims, utm viewcount.UTM, country string, reason viewcount.Reason,
		eng *viewcount.Engagement, d viewcount.VisitDelta) viewcount.Verdict {
		n++
		e := viewcount.Event{Time: t, Site: engSite, Page: page, UA: "Mozilla/5.0", ID: "v" + strconv.Itoa(n), Visitor: visitor,
			Source: viewcount.SourceBeacon, UTM: utm, Country: country}
		if eng != nil {
			e.Kind, e.Engagement, e.ID = viewcount.KindEngagement, *eng, "v"+strconv.Itoa(n-1)
		}
		return viewcount.Verdict{Event: e, Reason: reason, Seq: uint64(n), Dims: dims, Visit: d}
	}
	// visit returns a delta of the visit starting at start, entering at
	// entry with dims and utm, of the view at view.
	visit := func(view, start time.Time, entry string, dims viewcount.Dims, utm viewcount.UTM) viewcount.VisitDelta {
		d := none
		d.Set, d.ViewTime, d.VisitStart, d.EntryPage = true, view, start, entry
		d.EntryRefHost, d.EntryRefSource, d.EntryUTM = dims.RefHost, dims.RefSource, utm
		return d
	}
	with := func(d viewcount.VisitDelta, f func(*viewcount.VisitDelta)) viewcount.VisitDelta { f(&d); return d }
	aStart := at(9, 50, 0)
	aVisit := func(view time.Time) viewcount.VisitDelta { return visit(view, aStart, "/a", aDims, aUTM) }
	first := []viewcount.Verdict{
		// A: /a opens the visit, a bounce for now.
		v(1, aStart, "/a", aDims, aUTM, "DE", viewcount.Valid, nil, with(aVisit(aStart), func(d *viewcount.VisitDelta) {
			d.Visits, d.Bounces = 1, 1
		})),
		// 6 s engaged (bucket 6), 40 % (bucket 8); the visit lasts 8 s; still a bounce.
		v(1, at(9, 50, 8), "/a", aDims, aUTM, "DE", viewcount.Valid, &viewcount.Engagement{EngagedMS: 6000, Scroll: 40, AgeMS: 8000},
			with(aVisit(aStart), func(d *viewcount.VisitDelta) {
				d.VisitMS, d.EngagedMS, d.EngagedTo, d.ScrollTo = 8000, 6000, 6, 8
			})),
		// /b continues it: no bounce any more, 292 s longer, the exit moves from /a.
		v(1, at(9, 55, 0), "/b", aInside, viewcount.UTM{}, "DE", viewcount.Valid, nil, with(aVisit(at(9, 55, 0)), func(d *viewcount.VisitDelta) {
			d.Bounces, d.VisitMS, d.PrevPage = -1, 292_000, "/a"
		})),
		// A bot's view counts nowhere here.
		v(9, at(10, 0, 0), "/a", aDims, viewcount.UTM{}, "DE", viewcount.BotUA, nil, viewcount.VisitDelta{}),
		// /b's first report, at 10:05 for its view of 9:55: 30 s (bucket 15), 100 % (bucket 20), 600 s longer.
		v(1, at(10, 5, 0), "/b", aInside, viewcount.UTM{}, "DE", viewcount.Valid, &viewcount.Engagement{EngagedMS: 30_000, Scroll: 100, AgeMS: 600_000},
			with(aVisit(at(9, 55, 0)), func(d *viewcount.VisitDelta) {
				d.VisitMS, d.EngagedMS, d.EngagedTo, d.ScrollTo = 600_000, 30_000, 15, 20
			})),
	}
	// The second feed: /b's second report moves it from bucket 15 to 17
	// (45 s), which the first feed's rows counted.
	second := []viewcount.Verdict{
		v(1, at(10, 6, 0), "/b", aInside, viewcount.UTM{}, "DE", viewcount.Valid, &viewcount.Engagement{EngagedMS: 45_000, Scroll: 100, AgeMS: 660_000},
			with(aVisit(at(9, 55, 0)), func(d *viewcount.VisitDelta) {
				d.VisitMS, d.EngagedMS, d.EngagedFrom, d.EngagedTo, d.ScrollFrom, d.ScrollTo = 60_000, 15_000, 15, 17, 20, 20
			})),
		// /c: 840 s longer, the exit moves from /b.
		v(1, at(10, 20, 0), "/c", aInside, viewcount.UTM{}, "DE", viewcount.Valid, nil, with(aVisit(at(10, 20, 0)), func(d *viewcount.VisitDelta) {
			d.VisitMS, d.PrevPage = 840_000, "/b"
		})),
		v(1, at(10, 21, 0), "/c", aInside, viewcount.UTM{}, "DE", viewcount.EngagementRepeat, &viewcount.Engagement{AgeMS: 60_000}, viewcount.VisitDelta{}),
		v(3, at(10, 30, 0), "/x", aInside, viewcount.UTM{}, "DE", viewcount.EngagementOrphan, &viewcount.Engagement{EngagedMS: 1000}, viewcount.VisitDelta{}),
		// C: /b, then 3 s (bucket 3) and 10 % (bucket 2): a bounce of 5 s.
		v(4, at(11, 10, 0), "/b", cDims, viewcount.UTM{}, "FR", viewcount.Valid, nil, with(visit(at(11, 10, 0), at(11, 10, 0), "/b", cDims, viewcount.UTM{}),
			func(d *viewcount.VisitDelta) { d.Visits, d.Bounces = 1, 1 })),
		v(4, at(11, 10, 5), "/b", cDims, viewcount.UTM{}, "FR", viewcount.Valid, &viewcount.Engagement{EngagedMS: 3000, Scroll: 10, AgeMS: 5000},
			with(visit(at(11, 10, 0), at(11, 10, 0), "/b", cDims, viewcount.UTM{}), func(d *viewcount.VisitDelta) {
				d.VisitMS, d.EngagedMS, d.EngagedTo, d.ScrollTo = 5000, 3000, 3, 2
			})),
		// D: /d on March 31, its report in April: 25 s (bucket 14), 50 % (bucket 10), no bounce.
		v(5, dView, "/d", dDims, viewcount.UTM{}, "US", viewcount.Valid, nil, with(visit(dView, dView, "/d", dDims, viewcount.UTM{}),
			func(d *viewcount.VisitDelta) { d.Visits, d.Bounces = 1, 1 })),
		v(5, dView.Add(30*time.Second), "/d", dDims, viewcount.UTM{}, "US", viewcount.Valid, &viewcount.Engagement{EngagedMS: 25_000, Scroll: 50, AgeMS: 30_000},
			with(visit(dView, dView, "/d", dDims, viewcount.UTM{}), func(d *viewcount.VisitDelta) {
				d.Bounces, d.VisitMS, d.EngagedMS, d.EngagedTo, d.ScrollTo = -1, 30_000, 25_000, 14, 10
			})),
	}
	return [][]viewcount.Verdict{first, second}
}

// figures are one engagement_rollup row's sums, as DerivedRows prints
// them.
type figures struct {
	eng, engMS     int64
	engH, scrollH  string
	visits, bounce int64
	visitMS, exits int64
	rejected       int64
}

func (f figures) add(g figures) figures {
	return figures{f.eng + g.eng, f.engMS + g.engMS, mergeHist(f.engH, g.engH), mergeHist(f.scrollH, g.scrollH),
		f.visits + g.visits, f.bounce + g.bounce, f.visitMS + g.visitMS, f.exits + g.exits, f.rejected + g.rejected}
}

// mergeHist adds two histograms written as "{k:v,…}" (keys ascending).
func mergeHist(a, b string) string {
	m := map[int]int64{}
	for _, h := range []string{a, b} {
		for _, kv := range strings.Split(strings.Trim(h, "{}"), ",") {
			if k, v, ok := strings.Cut(kv, ":"); ok {
				ki, _ := strconv.Atoi(k)
				vi, _ := strconv.ParseInt(v, 10, 64)
				m[ki] += vi
			}
		}
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k] != 0 {
			parts = append(parts, strconv.Itoa(k)+":"+strconv.FormatInt(m[k], 10))
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func (f figures) String() string {
	h := func(s string) string {
		if s == "" {
			return "{}"
		}
		return s
	}
	return strings.Join([]string{strconv.FormatInt(f.eng, 10), strconv.FormatInt(f.engMS, 10), h(f.engH), h(f.scrollH),
		strconv.FormatInt(f.visits, 10), strconv.FormatInt(f.bounce, 10), strconv.FormatInt(f.visitMS, 10),
		strconv.FormatInt(f.exits, 10), strconv.FormatInt(f.rejected, 10)}, "\t")
}

// wantEngagementRollup is engagement_rollup's rows for engagementVerdicts,
// by hand: key grain, dim, value and bucket, tab-separated.
func wantEngagementRollup() map[string]string {
	want := map[string]figures{}
	put := func(bucket time.Time, dim, value string, f figures) {
		for _, g := range []struct {
			grain  string
			bucket time.Time
		}{{"hour", bucket}, {"day", bucket.Truncate(24 * time.Hour)}} {
			k := g.grain + "\t" + dim + "\t" + value + "\t" + g.bucket.Format(time.DateTime)
			want[k] = want[k].add(f)
		}
	}
	// putAll puts f under total and each of the dims with its value.
	putAll := func(bucket time.Time, f figures, dimValues ...string) {
		put(bucket, "total", "", f)
		for i := 0; i < len(dimValues); i += 2 {
			put(bucket, dimValues[i], dimValues[i+1], f)
		}
	}
	client := func(d viewcount.Dims, country string) []string {
		// asn: migration 022's; the fixture's events carry no AS number.
		return []string{"browser", d.Browser, "os", d.OS, "device", d.Device, "country", country, "screen", d.Screen, "asn", "0"}
	}
	referred := func(d viewcount.Dims, u viewcount.UTM) []string {
		return []string{"source", d.RefSource, "referrer", d.RefHost, "utm_source", u.Source, "utm_medium", u.Medium, "utm_campaign", u.Campaign}
	}

	h9, h11 := at(9, 0, 0), at(11, 0, 0)
	// A's engagement figures, at their views' hour (9:00), by the reports'
	// own dimensions: /a's from Google, /b's from the site itself.
	aEngA := figures{eng: 1, engMS: 6000, engH: "{6:1}", scrollH: "{8:1}"}
	aEngB := figures{eng: 2, engMS: 45_000, engH: "{17:1}", scrollH: "{20:1}"} // 15 +1 -1, 17 +1; 20 +1 +1 -1
	putAll(h9, aEngA, append(referred(aDims, aUTM), client(aDims, "DE")...)...)
	putAll(h9, aEngB, append(referred(aInside, viewcount.UTM{}), client(aInside, "DE")...)...)
	put(h9, "page", "/a", aEngA)
	put(h9, "page", "/b", aEngB)
	// A's visit, at 9:50 by its entry: one visit, no bounce (/b undid
	// it), 8 + 292 + 600 + 60 + 840 s.
	aVisit := figures{visits: 1, bounce: 0, visitMS: 1_800_000}
	putAll(h9, aVisit, append(referred(aDims, aUTM), client(aDims, "DE")...)...)
	put(h9, "entry_page", "/a", aVisit)
	put(h9, "exit_page", "/c", figures{exits: 1}) // /a +1 -1, /b +1 -1
	// The rejected reports, at their own hour.
	put(at(10, 0, 0), "engagement_reason", "engagement_repeat", figures{rejected: 1})
	put(at(10, 0, 0), "engagement_reason", "engagement_orphan", figures{rejected: 1})
	// C: everything by its own dimensions, at 11:00.
	cAll := figures{eng: 1, engMS: 3000, engH: "{3:1}", scrollH: "{2:1}", visits: 1, bounce: 1, visitMS: 5000}
	putAll(h11, cAll, append(referred(cDims, viewcount.UTM{}), client(cDims, "FR")...)...)
	put(h11, "page", "/b", figures{eng: 1, engMS: 3000, engH: "{3:1}", scrollH: "{2:1}"})
	put(h11, "entry_page", "/b", figures{visits: 1, bounce: 1, visitMS: 5000})
	put(h11, "exit_page", "/b", figures{exits: 1})
	// D: at 23:00 on March 31, though its report came in April.
	h23 := dView.Truncate(time.Hour)
	putAll(h23, figures{eng: 1, engMS: 25_000, engH: "{14:1}", scrollH: "{10:1}", visits: 1, bounce: 0, visitMS: 30_000},
		append(referred(dDims, viewcount.UTM{}), client(dDims, "US")...)...)
	put(h23, "page", "/d", figures{eng: 1, engMS: 25_000, engH: "{14:1}", scrollH: "{10:1}"})
	put(h23, "entry_page", "/d", figures{visits: 1, visitMS: 30_000})
	put(h23, "exit_page", "/d", figures{exits: 1})

	out := map[string]string{}
	for k, f := range want {
		out[k] = f.String()
	}
	return out
}

package storetest

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
)

// The dashboard dimensions of load rows: a handful of values each, skewed
// to the first, so the dashboard rollup's rows per batch are realistic.
var (
	benchSources   = []string{"(direct)", "(direct)", "(direct)", "Google", "Google", "Reddit", "Hacker News", "X", "news.example"}
	benchClients   = [][3]string{{"Chrome", "Windows", "desktop"}, {"Chrome", "Android", "mobile"}, {"Safari", "iOS", "mobile"}, {"Firefox", "Linux", "desktop"}, {"Safari", "macOS", "desktop"}}
	benchCountries = []string{"US", "US", "DE", "GB", "IN", "FR", "BR", "JP", ""}
	benchScreens   = []string{"", "mobile", "laptop", "desktop"}
	// benchASNs: each country's networks, skewed to the first (a country's
	// views come mostly from a few carriers), so the AS dimension of the
	// dashboard rollup (migration 022) splits its rows as real traffic does.
	benchASNs = map[string][]uint32{"US": {7922, 7922, 701, 20115, 7018, 21928}, "DE": {3320, 3320, 3209, 6805},
		"GB": {2856, 2856, 5089, 5378}, "IN": {55836, 45609, 24560}, "FR": {3215, 12322, 5410},
		"BR": {28573, 18881, 26599}, "JP": {2516, 4713, 17676}, "": {0}}
)

func benchDims(rng *rand.Rand) viewcount.Dims {
	src := benchSources[rng.IntN(len(benchSources))]
	host := ""
	if src != "(direct)" {
		host = "www." + strings.ToLower(strings.ReplaceAll(src, " ", "")) + ".com"
	}
	c := benchClients[rng.IntN(len(benchClients))]
	return viewcount.Dims{RefHost: host, RefSource: src, Browser: c[0], OS: c[1], Device: c[2],
		Screen: benchScreens[rng.IntN(len(benchScreens))]}
}

// LoadRows is one batch of load-test-like verdicts over pages pages: 80 %
// valid, random visitors, pages with a Zipf popularity, three events a
// stream message (Seq 1 + i/3, Index i%3) on partition 1. The store's and
// the rollup writer's benchmarks share it.
func LoadRows(n int, pages uint64, start time.Time) []viewcount.Verdict {
	rng := rand.New(rand.NewPCG(42, uint64(n)))
	var zipf *rand.Zipf
	if pages > 1 {
		zipf = rand.NewZipf(rng, 1.1, 1, pages-1)
	}
	rows := make([]viewcount.Verdict, n)
	for i := range rows {
		page := "/post/0"
		if zipf != nil {
			page = "/post/" + strconv.FormatUint(zipf.Uint64(), 10)
		}
		reason := viewcount.Valid
		if rng.IntN(10) < 2 {
			reason = viewcount.BotUA
		}
		rows[i] = viewcount.Verdict{Dims: benchDims(rng), Event: viewcount.Event{
			Time: start.Add(time.Duration(rng.IntN(1000)) * time.Millisecond),
			Site: "load.example", Page: page, Referrer: "https://news.example/",
			UA: "Mozilla/5.0 (X11; Linux x86_64; rv:145.0) Gecko/20100101 Firefox/145.0",
			ID: "ev-" + strconv.Itoa(i), Visitor: rng.Uint64(), Network: rng.Uint64(), Source: viewcount.SourcePixel,
			Hints: viewcount.Hints{}, Country: benchCountries[rng.IntN(len(benchCountries))]},
			Reason: reason, Partition: 1, Seq: uint64(1 + i/3), Index: uint32(i % 3)}
		asns := benchASNs[rows[i].Country]
		rows[i].ASN = asns[rows[i].Network%uint64(len(asns))]
	}
	return rows
}

// WithVisits makes every third row of load rows an engagement report of
// the view before it, and gives every valid row the delta the visit stage
// would: a view opening a visit (one in four) or continuing one from the
// page before (its exit moves), a report moving its view's engaged-time
// and scroll buckets, adding to the visit's duration, ending a bounce.
func WithVisits(rows []viewcount.Verdict) {
	for i := range rows {
		r := &rows[i]
		report := i%3 == 2
		if report {
			view := rows[i-1]
			r.Kind, r.Page, r.Dims, r.UTM, r.Country, r.Visitor = viewcount.KindEngagement, view.Page, view.Dims, view.UTM, view.Country, view.Visitor
			r.Engagement = viewcount.Engagement{EngagedMS: uint32(i%90) * 1000, Scroll: uint8(i % 101), AgeMS: uint32(i%90)*1000 + 300}
		}
		if r.Reason != viewcount.Valid {
			continue
		}
		start := r.Time.Add(-time.Duration(i%1200) * time.Second)
		d := viewcount.VisitDelta{Set: true, ViewTime: r.Time, VisitStart: start, EntryPage: "/post/" + strconv.Itoa(i%50),
			EntryRefHost: r.Dims.RefHost, EntryRefSource: r.Dims.RefSource, EntryUTM: r.UTM,
			EngagedFrom: -1, EngagedTo: -1, ScrollFrom: -1, ScrollTo: -1}
		switch {
		case report:
			ms := r.Engagement.EngagedMS
			d.ViewTime = r.Time.Add(-time.Duration(r.Engagement.AgeMS) * time.Millisecond)
			d.EngagedMS, d.VisitMS = int32(ms), int32(r.Engagement.AgeMS)
			d.EngagedFrom, d.EngagedTo = viewcount.EngagedBucket(ms/2)-int8(i%2), viewcount.EngagedBucket(ms)
			d.ScrollFrom, d.ScrollTo = -1, viewcount.ScrollBucket(r.Engagement.Scroll)
			if ms >= 10_000 && i%4 == 2 {
				d.Bounces = -1
			}
		case i%4 == 0:
			d.VisitStart, d.EntryPage, d.Visits, d.Bounces = r.Time, r.Page, 1, 1
		default:
			d.PrevPage, d.VisitMS = "/post/"+strconv.Itoa((i+7)%100), int32(i%600)*1000
		}
		r.Visit = d
	}
}

// ProcessCPU is the CPU time this process has used, user and system, every
// thread included (the engine's and its merges'): what a benchmark of the
// store path costs the machine, not only the caller's wait.
func ProcessCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

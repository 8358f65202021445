package storetest

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/feed"
	"github.com/viewcount/viewcount/sql/store"
)

// HistoryVersion changes whenever History generates different rows for the
// same config, so a cached generated store can be keyed by it.
const HistoryVersion = 1

// HistoryConfig describes a generated history. Zero fields take the
// defaults noted beside them.
type HistoryConfig struct {
	Events   int       // rows inserted (valid and filtered); default 10_000_000
	Days     int       // the history spans [End-Days×24h, End); default 30
	End      time.Time // default now, truncated to the minute
	Sites    []string  // default ["history.example"]; events are split evenly
	Pages    int       // pages per site, Zipf-like popularity; default 1000
	Visitors int       // visitor pool per site and UTC day (ids rotate daily); default 100_000
	// FilteredPercent is the share of rejected events, 0-100; default 15.
	// Negative means none.
	FilteredPercent int
	Seed            uint64 // the PCG seed; the same config gives the same rows
	// Visits gives every valid view the visit stage's delta of a visit of
	// its own (a bounce) and makes about half of them send an engagement
	// report in the same message, seconds to half an hour later, one in
	// ten of them rejected (engagement_repeat): rows for
	// engagement_rollup. The views are the same as without it (the
	// reports draw from a random source of their own).
	Visits   bool
	Batch    int       // rows per InsertViews; default 50_000
	Progress io.Writer // a line every ~1M rows; nil = silent
}

func (c *HistoryConfig) defaults() {
	if c.Events <= 0 {
		c.Events = 10_000_000
	}
	if c.Days <= 0 {
		c.Days = 30
	}
	if c.End.IsZero() {
		c.End = time.Now().UTC().Truncate(time.Minute)
	}
	c.End = c.End.UTC()
	if len(c.Sites) == 0 {
		c.Sites = []string{"history.example"}
	}
	if c.Pages <= 0 {
		c.Pages = 1000
	}
	if c.Visitors <= 0 {
		c.Visitors = 100_000
	}
	if c.FilteredPercent == 0 {
		c.FilteredPercent = 15
	}
	if c.FilteredPercent < 0 {
		c.FilteredPercent = 0
	}
	if c.Batch <= 0 {
		c.Batch = 50_000
	}
}

// Start is the first instant of the history (after defaults are applied).
func (c HistoryConfig) Start() time.Time { return c.End.Add(-time.Duration(c.Days) * 24 * time.Hour) }

// HistoryTotals are the exact counts of what History inserted.
type HistoryTotals struct {
	Events   int                      // rows inserted, engagement reports (Visits) included
	Valid    int                      // views with verdict valid
	Reports  int                      // engagement reports (Visits), accepted or not
	Filtered map[viewcount.Reason]int // rejected rows per reason
	Sites    map[string]*SiteTotals
	Elapsed  time.Duration // generation and inserts
}

// SiteTotals are one site's exact counts. Days are the UTC dates the
// history touches, oldest first; per-day slices are indexed like Days.
type SiteTotals struct {
	Valid    int
	Filtered map[viewcount.Reason]int
	Days     []time.Time
	// PageDay: valid views per page and UTC day.
	PageDay map[string][]int
	// Dims: valid views per dimension (the stats API's names: source,
	// referrer, utm_source, utm_medium, utm_campaign, browser, os, device,
	// country, screen) and value as stored ('' = unknown).
	Dims map[string]map[string]int
	// DayUniques: distinct visitor ids among valid views per UTC day (ids
	// rotate daily, so a range's distinct visitors are the sum over its days).
	DayUniques []int
}

// History inserts a generated, realistic history through st.InsertViews in
// batches with deduplication tokens (so a rerun with the same seed inserts
// nothing twice), and returns its exact totals. The caller migrates st.
//
// Events fall on every hour of the span with a daily rhythm and a weekly
// one, a slow growth and a spike day; pages have Zipf-like popularity;
// each visitor of the daily pool keeps its browser, OS, device, screen and
// country; referrers mix direct traffic, search engines, social sites,
// newsletters and blogs; some views carry UTM campaigns; FilteredPercent of
// events are rejected across the validator's reasons.
func History(ctx context.Context, st store.Store, cfg HistoryConfig) (HistoryTotals, error) {
	cfg.defaults()
	began := time.Now()
	g := newGenerator(cfg)
	tot := HistoryTotals{Filtered: make(map[viewcount.Reason]int), Sites: make(map[string]*SiteTotals)}
	batch := make([]viewcount.Verdict, 0, cfg.Batch)
	nextProgress := 1_000_000
	batchNo := 0
	fedTo, feedEvery := 0, 200_000
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		batchNo++
		token := fmt.Sprintf("history-v%d-%d-%d", HistoryVersion, cfg.Seed, batchNo)
		// Numbered and fed as a validator does: the batch's last stream
		// sequence, a feed every few batches (rollup.FeedConfig's 200k rows).
		for i := range batch {
			batch[i].Batch = batch[len(batch)-1].Seq
		}
		if err := st.InsertViews(ctx, token, batch); err != nil {
			return fmt.Errorf("history: insert batch %d: %w", batchNo, err)
		}
		if tot.Events+len(batch) >= fedTo+feedEvery {
			if _, err := feed.CatchUp(ctx, st); err != nil {
				return fmt.Errorf("history: feed after batch %d: %w", batchNo, err)
			}
			fedTo = tot.Events + len(batch)
		}
		tot.Events += len(batch)
		batch = batch[:0]
		if cfg.Progress != nil && tot.Events >= nextProgress {
			fmt.Fprintf(cfg.Progress, "history: %d/%d rows, %s\n", tot.Events, cfg.Events, time.Since(began).Round(time.Millisecond))
			nextProgress += 1_000_000
		}
		return nil
	}
	for i := range g.slots {
		for range g.slotCount[i] {
			batch = append(batch, g.event(i))
			if cfg.Visits {
				if r, ok := g.report(&batch[len(batch)-1]); ok {
					batch = append(batch, r)
					tot.Reports++
				}
			}
			if len(batch) >= cfg.Batch {
				if err := flush(); err != nil {
					return tot, err
				}
			}
		}
	}
	if err := flush(); err != nil {
		return tot, err
	}
	if _, err := feed.CatchUp(ctx, st); err != nil {
		return tot, fmt.Errorf("history: feed: %w", err)
	}
	for si, site := range cfg.Sites {
		s := g.sites[si].totals(g)
		tot.Sites[site] = s
		tot.Valid += s.Valid
		for r, n := range s.Filtered {
			tot.Filtered[r] += n
		}
	}
	tot.Elapsed = time.Since(began)
	return tot, nil
}

// generator holds the weighted choices and the running counts; counts are
// kept in arrays indexed by choice, turned into maps once at the end.
type generator struct {
	cfg       HistoryConfig
	rng       *rand.Rand
	vrng      *rand.Rand // the engagement reports' (HistoryConfig.Visits)
	zipf      *rand.Zipf
	slots     []time.Time // hour-long slots from Start
	slotCount []int       // events per slot, summing to cfg.Events
	day0      time.Time   // UTC midnight of the first slot
	days      int
	pages     []string
	sites     []*siteGen
	seq       uint64
}

type siteGen struct {
	name     string
	hash     uint64
	people   []person // the visitor pool's stable traits
	pageDay  [][]int  // [page][day]
	refs     []int
	utms     []int
	clients  []int
	screens  []int // index into screenValues
	country  []int
	filtered []int
	uniques  [][]uint64 // [day] bitset over the pool
}

type person struct {
	client, country uint8
	beacon          bool // sends the beacon (hints, screen class) rather than the pixel
	screen          uint8
}

func newGenerator(cfg HistoryConfig) *generator {
	g := &generator{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x5eed_2026)), vrng: rand.New(rand.NewPCG(cfg.Seed, 0xe9a9e))}
	g.zipf = rand.NewZipf(g.rng, 1.1, 8, uint64(cfg.Pages-1))
	g.pages = make([]string, cfg.Pages)
	g.pages[0] = "/"
	for i := 1; i < cfg.Pages; i++ {
		g.pages[i] = "/posts/" + strconv.Itoa(i)
	}
	start := cfg.Start()
	var weights []float64
	for t := start; t.Before(cfg.End); t = t.Add(time.Hour) {
		g.slots = append(g.slots, t)
		weights = append(weights, slotWeight(t, start, cfg.Days))
	}
	g.slotCount = apportion(cfg.Events, weights)
	g.day0 = start.Truncate(24 * time.Hour)
	g.days = int(cfg.End.Add(-time.Millisecond).Truncate(24*time.Hour).Sub(g.day0)/(24*time.Hour)) + 1
	for _, name := range cfg.Sites {
		h := fnv.New64a()
		h.Write([]byte(name))
		s := &siteGen{
			name: name, hash: h.Sum64(),
			people:   make([]person, cfg.Visitors),
			pageDay:  make([][]int, cfg.Pages),
			refs:     make([]int, len(referrers)),
			utms:     make([]int, len(campaigns)),
			clients:  make([]int, len(clients)),
			screens:  make([]int, len(screenValues)),
			country:  make([]int, len(countries)),
			filtered: make([]int, len(filterReasons)),
			uniques:  make([][]uint64, g.days),
		}
		for i := range s.pageDay {
			s.pageDay[i] = make([]int, g.days)
		}
		for d := range s.uniques {
			s.uniques[d] = make([]uint64, (cfg.Visitors+63)/64)
		}
		for i := range s.people {
			c := pick(g.rng, clientCum)
			p := person{client: uint8(c), country: uint8(pick(g.rng, countryCum)), beacon: g.rng.IntN(10) < 7}
			if p.beacon {
				p.screen = uint8(screenFor(clients[c].device, g.rng))
			}
			s.people[i] = p
		}
		g.sites = append(g.sites, s)
	}
	return g
}

// slotWeight shapes traffic: a daily rhythm (UTC evening peak), quieter
// weekends, 50 % growth over the span, and a spike three days before the end.
func slotWeight(t, start time.Time, days int) float64 {
	hour := float64(t.Hour())
	w := 1 + 0.6*math.Sin((hour-9)/24*2*math.Pi)
	if wd := t.Weekday(); wd == time.Saturday || wd == time.Sunday {
		w *= 0.75
	}
	day := int(t.Sub(start) / (24 * time.Hour))
	w *= 1 + 0.5*float64(day)/float64(days)
	if day == days-3 {
		w *= 2.5
	}
	return w
}

// apportion splits n over weights exactly (cumulative rounding).
func apportion(n int, weights []float64) []int {
	var sum float64
	for _, w := range weights {
		sum += w
	}
	out := make([]int, len(weights))
	var cum float64
	prev := 0
	for i, w := range weights {
		cum += w
		next := int(math.Round(float64(n) * cum / sum))
		if i == len(weights)-1 {
			next = n
		}
		out[i] = next - prev
		prev = next
	}
	return out
}

func (g *generator) event(slot int) viewcount.Verdict {
	rng := g.rng
	g.seq++
	s := g.sites[int(g.seq)%len(g.sites)]
	t := g.slots[slot].Add(time.Duration(rng.Int64N(int64(time.Hour/time.Millisecond))) * time.Millisecond)
	if !t.Before(g.cfg.End) { // a partial last slot
		t = g.cfg.End.Add(-time.Duration(1+rng.IntN(1000)) * time.Millisecond)
	}
	day := int(t.Truncate(24*time.Hour).Sub(g.day0) / (24 * time.Hour))
	vi := rng.IntN(g.cfg.Visitors)
	p := s.people[vi]
	page := int(g.zipf.Uint64())
	ref := pick(rng, referrerCum)
	camp := 0
	if rng.IntN(100) < 12 {
		camp = 1 + rng.IntN(len(campaigns)-1)
	}
	cl := clients[p.client]
	r := referrers[ref]
	v := viewcount.Verdict{
		Event: viewcount.Event{
			Time: t, Site: s.name, Page: g.pages[page], Referrer: r.url, UA: cl.ua,
			ID:      "h" + strconv.FormatUint(g.seq, 36),
			Visitor: mix(s.hash ^ uint64(day)<<40 ^ uint64(vi)), Network: mix(s.hash ^ uint64(vi>>4)),
			Source: viewcount.SourcePixel,
			UTM:    campaigns[camp].utm, Country: countries[p.country].code,
		},
		Reason: viewcount.Valid, Partition: 0, Seq: g.seq, Index: 0,
		Dims: viewcount.Dims{RefHost: r.host, RefSource: r.source, Browser: cl.browser, OS: cl.os, Device: cl.device,
			Screen: screenValues[p.screen]},
	}
	if p.beacon {
		v.Source = viewcount.SourceBeacon
		v.Hints = viewcount.Hints{Present: true, ScreenW: 1280, ScreenH: 800, Languages: 2, TZ: true, Secure: true}
	}
	if rng.IntN(100) < g.cfg.FilteredPercent {
		fr := pick(rng, filterCum)
		v.Reason = filterReasons[fr].reason
		switch v.Reason {
		case viewcount.BotUA:
			v.UA = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
			v.Dims.Browser, v.Dims.OS, v.Dims.Device, v.Dims.Screen = "", "", "other", ""
		case viewcount.Headless:
			v.Webdriver = true
		case viewcount.Datacenter:
			v.Datacenter = true
		case viewcount.EmptyUA:
			v.UA = ""
			v.Dims.Browser, v.Dims.OS, v.Dims.Device = "", "", "other"
		}
		s.filtered[fr]++
		return v
	}
	s.pageDay[page][day]++
	s.refs[ref]++
	s.utms[camp]++
	s.clients[p.client]++
	s.screens[p.screen]++
	s.country[p.country]++
	s.uniques[day][vi/64] |= 1 << (vi % 64)
	return v
}

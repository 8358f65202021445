package api

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
)

// Querier is the store as the api reads it.
type Querier interface {
	Query(ctx context.Context, query string, params store.Params) (*store.Result, error)
}

// Count is one public count and the time it was read from the rollups.
// Pending is what the count did not include yet then: events received but
// not validated, valid views held for settling, and valid views stored but
// not fed to the rollups (as the PendingFunc last counted them), so a
// lagged count explains itself.
type Count struct {
	Views   uint64
	Uniques uint64
	AsOf    time.Time
	Pending uint64
	// begin and done are the snapshot's read counter before the count's
	// query began and once it had answered, and before the feed progress
	// last read when it began: with feed progress read after done, they
	// bound what the count holds (own views).
	begin, done uint64
	before      *fedState
}

// PendingFunc counts the events not in the counts yet, per site and page,
// with each site's oldest (validate.PendingCounter).
type PendingFunc func(ctx context.Context) (viewcount.Pending, error)

// pendingReading is a Pending and when it was counted.
type pendingReading struct {
	viewcount.Pending
	at time.Time
}

type key struct{ site, page string } // page "" is the whole site

type entry struct {
	count    atomic.Pointer[reading]
	lastRead atomic.Int64 // unix nanos
	// readAgain is set when the reading is served from the snapshot, so
	// the next refresh re-reads this key; the refresh clears it.
	readAgain atomic.Bool
}

// reading is a count of one key as one fetch or refresh found it; a refresh
// stores a new reading rather than changing this one. body caches the api's
// JSON answer: it depends on nothing but the key and the reading, so it is
// encoded by the first request after each refresh and reused by the rest
// (BenchmarkCountCacheHit), rather than encoded once per request.
type reading struct {
	Count
	body atomic.Pointer[[]byte]
}

// Snapshot holds the public counts of recently read pages. A page read for
// the first time costs one indexed point query (shared by concurrent
// readers); after that a read is a map lookup. Every lag, a refresh re-reads
// the pages read again since their last reading, so a page in demand is
// never older than about one lag, while a page read once costs its one
// query and nothing after (TestSnapshotRefreshesPagesReadAgain: refreshing
// every tracked page kept a scan of pages read once costing CPU every lag
// until they went idle). A reading older than
// stale is fetched anew by the next read, so no answer is much older than
// the lag. Pages not read for idle are dropped, and at most max are
// tracked, so memory is bounded whatever pages clients ask for.
type Snapshot struct {
	q      Querier
	lag    time.Duration
	stale  time.Duration
	idle   time.Duration
	max    int
	now    func() time.Time
	logger *slog.Logger

	mu      sync.RWMutex
	entries map[key]*entry
	group   singleflight.Group

	pendingFunc PendingFunc
	pending     atomic.Pointer[pendingReading]
	counting    CountingFunc

	// reads orders count queries and feed progress reads (own.go); a
	// counter, not the clock, which tests stop and which may step back.
	reads   atomic.Uint64
	fedFunc FedFunc
	fed     atomic.Pointer[fedState]
	ownWait time.Duration
}

// CountingFunc says what a site's public counts count (viewcount.CountMode)
// and its engaged-view threshold.
type CountingFunc func(site string) (viewcount.CountMode, time.Duration)

// CountBy makes the snapshot ask f what each site counts: a site counting
// engaged views (docs/engagement.md) gets its engaged views as its
// counts. Without it every site counts views.
func (s *Snapshot) CountBy(f CountingFunc) { s.counting = f }

// countsEngaged reports whether site's public counts count engaged views.
func (s *Snapshot) countsEngaged(site string) bool {
	if s.counting == nil {
		return false
	}
	mode, _ := s.counting(site)
	return mode == viewcount.CountEngaged
}

// engaged turns the counts of a site counting engaged views into engaged
// counts: views are its engaged views; uniques, which the engagement
// rollup does not keep, are the counted views' capped at them; pending
// gains the views of the last horizon not engaged yet, whose reports may
// still come.
func (s *Snapshot) engaged(ctx context.Context, site string, counts map[string]Count) error {
	if s.counting == nil || len(counts) == 0 {
		return nil
	}
	mode, after := s.counting(site)
	if mode != viewcount.CountEngaged {
		return nil
	}
	pages := make([]string, 0, len(counts))
	for p := range counts {
		pages = append(pages, p)
	}
	rows, err := store.Select[queries.PageEngagedCountsRow](ctx, s.q, queries.Text(queries.PageEngagedCounts), store.Params{
		"site": site, "pages": store.ArrayParam(pages),
		"bucket": strconv.Itoa(int(viewcount.EngagedBucket(uint32(after.Milliseconds())))),
		"recent": s.now().Add(-viewcount.EngagementHorizon).UTC().Truncate(time.Hour).Format(time.DateTime)})
	if err != nil {
		return fmt.Errorf("api: engaged counts of %s: %w", site, err)
	}
	got := make(map[string]queries.PageEngagedCountsRow, len(rows))
	for _, r := range rows {
		got[r.Page] = r
	}
	for p, c := range counts {
		r := got[p]
		c.Views, c.Pending = r.Views, c.Pending+r.Open
		c.Uniques = viewcount.CapUniques(c.Views, c.Uniques)
		counts[p] = c
	}
	return nil
}

// CountPending makes the snapshot count what is pending with f before each
// refresh (every lag), so each count says how much is still to come.
func (s *Snapshot) CountPending(f PendingFunc) { s.pendingFunc = f }

// pendingOf is the latest pending count of k.
func (s *Snapshot) pendingOf(k key) uint64 {
	if m := s.pending.Load(); m != nil {
		return m.Events[viewcount.PendingKey{Site: k.site, Page: k.page}]
	}
	return 0
}

// Lag is how far counting of site was behind when its pending events were
// last counted (every lag): the age then of the oldest of them, 0 when it
// had none. A site at rest reads 0 whatever other sites wait for, or the
// pipeline did last. 0 too before the first count, or when the last one
// failed (it is logged, and pending reads 0 alike).
func (s *Snapshot) Lag(site string) time.Duration {
	m := s.pending.Load()
	if m == nil {
		return 0
	}
	oldest, ok := m.Oldest[site]
	if !ok {
		return 0
	}
	return max(m.at.Sub(oldest), 0)
}

// countPending refreshes the pending counts; on failure they are dropped
// rather than kept stale.
func (s *Snapshot) countPending(ctx context.Context) {
	if s.pendingFunc == nil {
		return
	}
	m, err := s.pendingFunc(ctx)
	if err != nil {
		s.logger.Warn("pending events not counted", "err", err)
		s.pending.Store(nil)
		return
	}
	s.pending.Store(&pendingReading{Pending: m, at: s.now()})
}

// NewSnapshot returns a snapshot refreshed every lag.
func NewSnapshot(q Querier, lag time.Duration, maxKeys int, now func() time.Time, logger *slog.Logger) *Snapshot {
	if maxKeys <= 0 {
		maxKeys = 100000
	}
	// A page kept by the refresh is at most a lag plus the refresh's own
	// time old; half a lag of slack keeps such pages from being fetched by
	// readers just before their refresh comes round.
	return &Snapshot{q: q, lag: lag, stale: lag + lag/2, idle: max(10*time.Minute, 10*lag), max: maxKeys, now: now,
		logger: logger.With("component", "snapshot"), entries: map[key]*entry{}, ownWait: ownWait}
}

// Get returns the count of site+page (page "" for the whole site).
func (s *Snapshot) Get(ctx context.Context, site, page string) (Count, error) {
	r, err := s.get(ctx, site, page)
	if err != nil {
		return Count{}, err
	}
	return r.Count, nil
}

// get returns the current reading of site+page. It must not be modified,
// except to cache its body.
func (s *Snapshot) get(ctx context.Context, site, page string) (*reading, error) {
	k := key{site, page}
	s.mu.RLock()
	e := s.entries[k]
	s.mu.RUnlock()
	var old *reading
	if e != nil {
		now := s.now()
		e.lastRead.Store(now.UnixNano())
		if r := e.count.Load(); r != nil {
			if now.Sub(r.AsOf) <= s.stale {
				if !e.readAgain.Load() { // a load, not a store, on the hot path
					e.readAgain.Store(true)
				}
				return r, nil
			}
			old = r
		}
	}
	r, err := s.fetchShared(ctx, k)
	if err != nil {
		if old != nil {
			return old, nil // the store is out: the older count, whose as_of says so
		}
		return nil, err
	}
	return r, nil
}

// fetchShared reads k from the store and keeps the reading, one query for
// concurrent callers.
func (s *Snapshot) fetchShared(ctx context.Context, k key) (*reading, error) {
	v, err, _ := s.group.Do(k.site+"\x00"+k.page, func() (any, error) {
		c, err := s.fetch(ctx, k)
		if err != nil {
			return nil, err
		}
		return s.store(k, c), nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*reading), nil
}

func (s *Snapshot) store(k key, c Count) *reading {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.storeLocked(k, c)
}

func (s *Snapshot) storeLocked(k key, c Count) *reading {
	r := &reading{Count: c}
	e := s.entries[k]
	if e == nil {
		if len(s.entries) >= s.max {
			s.evictLocked()
		}
		// The caller's strings may point into its request line (up to a
		// megabyte of headers); a tracked key must not keep that alive.
		k = key{strings.Clone(k.site), strings.Clone(k.page)}
		e = &entry{}
		s.entries[k] = e
	}
	e.lastRead.Store(s.now().UnixNano())
	e.count.Store(r)
	e.readAgain.Store(false) // this read is the one the reading answers
	return r
}

// evictLocked drops the least recently read of a few entries: Go's map order
// is random, so this approximates LRU at O(1) without a list to maintain.
func (s *Snapshot) evictLocked() {
	var victim key
	oldest := int64(1<<63 - 1)
	n := 0
	for k, e := range s.entries {
		if t := e.lastRead.Load(); t < oldest {
			oldest, victim = t, k
		}
		if n++; n == 8 {
			break
		}
	}
	delete(s.entries, victim)
}

func (s *Snapshot) fetch(ctx context.Context, k key) (Count, error) {
	asOf := s.now().UTC()
	before := s.fed.Load()
	begin := s.reads.Add(1)
	var (
		res *store.Result
		err error
	)
	if k.page == "" {
		res, err = s.q.Query(ctx, queries.Text(queries.SiteCount), store.Params{"site": k.site})
	} else {
		res, err = s.q.Query(ctx, queries.Text(queries.PageCount), store.Params{"site": k.site, "page": k.page})
	}
	if err != nil {
		return Count{}, fmt.Errorf("api: count %s%s: %w", k.site, k.page, err)
	}
	c := Count{AsOf: asOf, Pending: s.pendingOf(k), begin: begin, done: s.reads.Add(1), before: before}
	if res.Next() {
		c.Views, c.Uniques = res.Uint64("views"), res.Uint64("uniques")
		if err := res.Err(); err != nil {
			return Count{}, fmt.Errorf("api: count %s%s: %w", k.site, k.page, err)
		}
		c.Uniques = viewcount.CapUniques(c.Views, c.Uniques)
	}
	one := map[string]Count{k.page: c}
	if err := s.engaged(ctx, k.site, one); err != nil {
		return Count{}, err
	}
	return one[k.page], nil
}

// Run loads the most viewed pages (Warm) and then refreshes the snapshot
// every lag until ctx is cancelled.
func (s *Snapshot) Run(ctx context.Context) error {
	start := time.Now()
	if n, err := s.Warm(ctx, WarmPages); err != nil {
		s.logger.Warn("snapshot not warmed; pages are read from the store when first asked for", "err", err)
	} else {
		s.logger.Info("snapshot warmed", "pages", n, "elapsed", time.Since(start).Round(time.Millisecond))
	}
	t := time.NewTicker(s.lag)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			s.countPending(ctx)
			s.refresh(ctx)
		}
	}
}

// refreshChunk bounds the pages of one refresh query, keeping the array
// parameter and the IN set small.
const refreshChunk = 500

// refresh re-reads the counts read again since their last reading, with one
// query per site and chunk of pages, rather than one per page, so a refresh
// of thousands of pages stays well inside the lag. The rest are left as
// they are: the next read of one fetches it if it has gone stale by then.
func (s *Snapshot) refresh(ctx context.Context) {
	cutoff := s.now().Add(-s.idle).UnixNano()
	bySite := map[string][]string{}
	s.mu.Lock()
	for k, e := range s.entries {
		if e.lastRead.Load() < cutoff {
			delete(s.entries, k)
			continue
		}
		if e.readAgain.Swap(false) {
			bySite[k.site] = append(bySite[k.site], k.page)
		}
	}
	s.mu.Unlock()
	failed := 0
	for site, pages := range bySite {
		for len(pages) > 0 && ctx.Err() == nil {
			chunk := pages[:min(len(pages), refreshChunk)]
			pages = pages[len(chunk):]
			counts, err := s.fetchMany(ctx, site, chunk)
			if err != nil {
				failed += len(chunk)
				continue // keep serving the older counts; their as_of says so
			}
			s.mu.RLock()
			for _, page := range chunk {
				if e := s.entries[key{site, page}]; e != nil {
					e.count.Store(&reading{Count: counts[page]})
				}
			}
			s.mu.RUnlock()
		}
	}
	if failed > 0 {
		s.logger.Warn("snapshot refresh incomplete", "failed", failed)
	}
}

// fetchMany reads the counts of pages of site; a page absent from the
// result has no views yet and gets zeros.
func (s *Snapshot) fetchMany(ctx context.Context, site string, pages []string) (map[string]Count, error) {
	asOf := s.now().UTC()
	before := s.fed.Load()
	begin := s.reads.Add(1)
	out := make(map[string]Count, len(pages))
	var named []string
	for _, p := range pages {
		out[p] = Count{AsOf: asOf, Pending: s.pendingOf(key{site, p}), begin: begin, before: before}
		if p == "" {
			c, err := s.fetch(ctx, key{site: site})
			if err != nil {
				return nil, err
			}
			out[p] = c
			continue
		}
		named = append(named, p)
	}
	if len(named) == 0 {
		return out, nil
	}
	res, err := s.q.Query(ctx, queries.Text(queries.PageCounts), store.Params{"site": site, "pages": store.ArrayParam(named)})
	if err != nil {
		return nil, fmt.Errorf("api: counts of %d pages of %s: %w", len(named), site, err)
	}
	done := s.reads.Add(1)
	for p, c := range out {
		c.done = max(c.done, done)
		out[p] = c
	}
	for res.Next() {
		page, views, uniques := res.String("page"), res.Uint64("views"), res.Uint64("uniques")
		if err := res.Err(); err != nil {
			return nil, fmt.Errorf("api: counts of %s: %w", site, err)
		}
		out[page] = Count{Views: views, Uniques: viewcount.CapUniques(views, uniques), AsOf: asOf, Pending: s.pendingOf(key{site, page}), begin: begin, done: done, before: before}
	}
	if err := res.Err(); err != nil {
		return nil, fmt.Errorf("api: counts of %s: %w", site, err)
	}
	// The site's total (page "") went through fetch, engaged there.
	pageCounts := make(map[string]Count, len(out))
	for p, c := range out {
		if p != "" {
			pageCounts[p] = c
		}
	}
	if err := s.engaged(ctx, site, pageCounts); err != nil {
		return nil, err
	}
	maps.Copy(out, pageCounts)
	return out, nil
}

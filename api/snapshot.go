package api

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	vcsql "github.com/viewcount/viewcount/sql"
	"github.com/viewcount/viewcount/sql/store"
)

// Querier is the store as the api reads it.
type Querier interface {
	Query(ctx context.Context, query string, params store.Params) (*store.Result, error)
}

// Count is one public count and the time it was read from the rollups.
type Count struct {
	Views   uint64
	Uniques uint64
	AsOf    time.Time
}

type key struct{ site, page string } // page "" is the whole site

type entry struct {
	count    atomic.Pointer[Count]
	lastRead atomic.Int64 // unix nanos
}

// Snapshot holds the public counts of recently read pages and refreshes
// them every lag. A page read for the first time costs one indexed point
// query (shared by concurrent readers); after that a read is a map lookup.
// Pages not read for idle are dropped, and at most max are tracked, so memory
// is bounded whatever pages clients ask for.
type Snapshot struct {
	q      Querier
	lag    time.Duration
	idle   time.Duration
	max    int
	now    func() time.Time
	logger *slog.Logger

	mu      sync.RWMutex
	entries map[key]*entry
	group   singleflight.Group
}

// NewSnapshot returns a snapshot refreshed every lag.
func NewSnapshot(q Querier, lag time.Duration, maxKeys int, now func() time.Time, logger *slog.Logger) *Snapshot {
	if maxKeys <= 0 {
		maxKeys = 100000
	}
	return &Snapshot{q: q, lag: lag, idle: max(10*time.Minute, 10*lag), max: maxKeys, now: now,
		logger: logger.With("component", "snapshot"), entries: map[key]*entry{}}
}

// Get returns the count of site+page (page "" for the whole site).
func (s *Snapshot) Get(ctx context.Context, site, page string) (Count, error) {
	k := key{site, page}
	s.mu.RLock()
	e := s.entries[k]
	s.mu.RUnlock()
	if e != nil {
		e.lastRead.Store(s.now().UnixNano())
		if c := e.count.Load(); c != nil {
			return *c, nil
		}
	}
	v, err, _ := s.group.Do(site+"\x00"+page, func() (any, error) {
		c, err := s.fetch(ctx, k)
		if err != nil {
			return Count{}, err
		}
		s.store(k, c)
		return c, nil
	})
	if err != nil {
		return Count{}, err
	}
	return v.(Count), nil
}

func (s *Snapshot) store(k key, c Count) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[k]
	if e == nil {
		if len(s.entries) >= s.max {
			s.evictLocked()
		}
		e = &entry{}
		s.entries[k] = e
	}
	e.lastRead.Store(s.now().UnixNano())
	e.count.Store(&c)
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
	var (
		res *store.Result
		err error
	)
	if k.page == "" {
		res, err = s.q.Query(ctx, vcsql.Query("site_count"), store.Params{"site": k.site})
	} else {
		res, err = s.q.Query(ctx, vcsql.Query("page_count"), store.Params{"site": k.site, "page": k.page})
	}
	if err != nil {
		return Count{}, fmt.Errorf("api: count %s%s: %w", k.site, k.page, err)
	}
	c := Count{AsOf: asOf}
	if len(res.Rows) > 0 {
		c.Views, c.Uniques, err = parseCount(res)
		if err != nil {
			return Count{}, fmt.Errorf("api: count %s%s: %w", k.site, k.page, err)
		}
	}
	return c, nil
}

func parseCount(res *store.Result) (views, uniques uint64, err error) {
	col := func(name string) (uint64, error) {
		for i, c := range res.Columns {
			if c == name {
				if res.Rows[0][i] == "" {
					return 0, nil
				}
				return strconv.ParseUint(res.Rows[0][i], 10, 64)
			}
		}
		return 0, fmt.Errorf("column %s missing", name)
	}
	if views, err = col("views"); err != nil {
		return 0, 0, err
	}
	uniques, err = col("uniques")
	return views, uniques, err
}

// Run refreshes the snapshot every lag until ctx is cancelled.
func (s *Snapshot) Run(ctx context.Context) error {
	t := time.NewTicker(s.lag)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			s.refresh(ctx)
		}
	}
}

func (s *Snapshot) refresh(ctx context.Context) {
	cutoff := s.now().Add(-s.idle).UnixNano()
	s.mu.Lock()
	keys := make([]key, 0, len(s.entries))
	for k, e := range s.entries {
		if e.lastRead.Load() < cutoff {
			delete(s.entries, k)
			continue
		}
		keys = append(keys, k)
	}
	s.mu.Unlock()
	failed := 0
	for _, k := range keys {
		if ctx.Err() != nil {
			return
		}
		c, err := s.fetch(ctx, k)
		if err != nil {
			failed++
			continue // keep serving the older count; its as_of says so
		}
		s.mu.RLock()
		e := s.entries[k]
		s.mu.RUnlock()
		if e != nil {
			e.count.Store(&c)
		}
	}
	if failed > 0 {
		s.logger.Warn("snapshot refresh incomplete", "failed", failed, "keys", len(keys))
	}
}

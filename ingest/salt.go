package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// SaltLen is the size of a daily salt.
const SaltLen = 32

const dayKey = "2006-01-02"

// Salts hands out the daily visitor-id salt. Every ingest process shares the
// salts through a JetStream KV bucket (viewcount.BucketSalts, key = the UTC
// date), so a visitor gets the same id whichever process receives the hit.
// A salt is created by whichever process first needs it (kv.Create decides
// the race) and deleted two days later: once it is gone, that day's visitor
// ids can no longer be linked to anything, which is the privacy guarantee.
// The bucket's 48 h TTL deletes old salts even if no process is running.
//
// Salts is safe for concurrent use. For is a map lookup except on the first
// call of a day (per process), which goes to the bucket.
type Salts struct {
	kv     jetstream.KeyValue
	random io.Reader
	logger *slog.Logger

	mu    sync.RWMutex
	cache map[int64][]byte // by day number since the epoch; today and yesterday
	gone  map[int64]bool   // days whose salt Existing found deleted (or never made)

	fetch sync.Mutex // one bucket round trip at a time; also serialises random
}

// NewSalts returns salts backed by kv. random is the source of new salts
// (crypto/rand.Reader in production; a fixed reader makes tests exact).
func NewSalts(kv jetstream.KeyValue, random io.Reader, logger *slog.Logger) *Salts {
	return &Salts{kv: kv, random: random, logger: logger.With("component", "ingest"), cache: map[int64][]byte{}, gone: map[int64]bool{}}
}

// For returns the salt of t's UTC day. It fails (wrapped ErrUnavailable)
// only when the salt is neither cached nor obtainable from the bucket; the
// hit cannot be given a visitor id then and must not be acknowledged.
// The returned slice must not be modified.
func (s *Salts) For(ctx context.Context, t time.Time) ([]byte, error) {
	day := dayOf(t)
	s.mu.RLock()
	salt, ok := s.cache[day]
	s.mu.RUnlock()
	if ok {
		return salt, nil
	}

	s.fetch.Lock()
	defer s.fetch.Unlock()
	s.mu.RLock()
	salt, ok = s.cache[day]
	s.mu.RUnlock()
	if ok {
		return salt, nil // another caller fetched it while we waited
	}
	key := t.UTC().Format(dayKey)
	salt, created, err := s.load(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("%w: salt %s: %v", ErrUnavailable, key, err)
	}
	s.remember(day, salt)
	if created {
		s.logger.Info("created daily salt", "day", key)
		s.deleteOld(ctx, t)
	}
	return salt, nil
}

// Existing returns the salt of t's UTC day if it still exists, and never
// creates one: ok is false once it is deleted (two days on), or when no hit
// of that day made one. It is for a day that is over (an engagement
// report's view's, ingest's engagement routing), where a new salt could
// only give ids that match nothing, and would outlive the day's deletion.
// A day found gone is remembered, so reports naming it cost no further
// round trips. Errors as For.
func (s *Salts) Existing(ctx context.Context, t time.Time) (salt []byte, ok bool, err error) {
	day := dayOf(t)
	if salt, ok, known := s.known(day); known {
		return salt, ok, nil
	}

	s.fetch.Lock()
	defer s.fetch.Unlock()
	if salt, ok, known := s.known(day); known {
		return salt, ok, nil // another caller fetched it while we waited
	}
	key := t.UTC().Format(dayKey)
	e, err := s.kv.Get(ctx, key)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		s.mu.Lock()
		s.gone[day] = true
		s.mu.Unlock()
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("%w: salt %s: get: %v", ErrUnavailable, key, err)
	}
	if salt, err = checkSalt(e.Value()); err != nil {
		return nil, false, fmt.Errorf("%w: salt %s: %v", ErrUnavailable, key, err)
	}
	s.remember(day, salt)
	return salt, true, nil
}

// known is what the cache says of day's salt: known is false when it says
// nothing.
func (s *Salts) known(day int64) (salt []byte, ok, known bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	salt, ok = s.cache[day]
	return salt, ok, ok || s.gone[day]
}

// remember caches day's salt, forgetting days before the day before the
// newest known: only today's and yesterday's are ever asked for.
func (s *Salts) remember(day int64, salt []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cache[day] = salt
	newest := day
	for d := range s.cache {
		newest = max(newest, d)
	}
	for d := range s.cache {
		if d < newest-1 {
			delete(s.cache, d)
		}
	}
	for d := range s.gone {
		if d < newest-1 {
			delete(s.gone, d)
		}
	}
}

// load gets the day's salt from the bucket or creates it.
func (s *Salts) load(ctx context.Context, key string) (salt []byte, created bool, err error) {
	e, err := s.kv.Get(ctx, key)
	switch {
	case err == nil:
		salt, err = checkSalt(e.Value())
		return salt, false, err
	case !errors.Is(err, jetstream.ErrKeyNotFound):
		return nil, false, fmt.Errorf("get: %w", err)
	}
	fresh := make([]byte, SaltLen)
	if _, err := io.ReadFull(s.random, fresh); err != nil {
		return nil, false, fmt.Errorf("random: %w", err)
	}
	if _, err := s.kv.Create(ctx, key, fresh); err != nil {
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return nil, false, fmt.Errorf("create: %w", err)
		}
		// Another process created it first: everyone must use theirs.
		e, err := s.kv.Get(ctx, key)
		if err != nil {
			return nil, false, fmt.Errorf("get after race: %w", err)
		}
		salt, err = checkSalt(e.Value())
		return salt, false, err
	}
	return fresh, true, nil
}

func checkSalt(b []byte) ([]byte, error) {
	if len(b) < 16 {
		return nil, fmt.Errorf("stored salt is %d bytes", len(b))
	}
	return b, nil
}

// deleteOld purges salts older than yesterday (relative to t). Yesterday's
// is kept: hits received just before midnight may still be hashed with it.
// Failures are logged, not returned: the hit is fine, and the next day's
// creation (or the bucket TTL) deletes them anyway.
func (s *Salts) deleteOld(ctx context.Context, t time.Time) {
	keys, err := s.kv.Keys(ctx)
	if err != nil {
		if !errors.Is(err, jetstream.ErrNoKeysFound) {
			s.logger.Warn("listing old salts", "err", err)
		}
		return
	}
	oldest := dayOf(t) - 1
	for _, k := range keys {
		d, err := time.Parse(dayKey, k)
		if err != nil || dayOf(d) >= oldest {
			continue
		}
		// Purge, not Delete: it also drops any earlier revision of the key.
		if err := s.kv.Purge(ctx, k); err != nil {
			s.logger.Warn("deleting old salt", "day", k, "err", err)
			continue
		}
		s.logger.Info("deleted old salt", "day", k)
	}
}

// dayOf is the UTC day number of t (days since 1970-01-01).
func dayOf(t time.Time) int64 {
	sec := t.Unix()
	d := sec / 86400
	if sec%86400 < 0 {
		d--
	}
	return d
}

package ingest

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/stream/streamtest"
)

// countingRandom fills each Read with one byte value, starting at start and
// incrementing per call, so every salt a test creates is known exactly.
type countingRandom struct{ next byte }

func (r *countingRandom) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = r.next
	}
	r.next++
	return len(p), nil
}

// kvSpy wraps the real bucket to count round trips and inject faults.
type kvSpy struct {
	jetstream.KeyValue
	gets     atomic.Int32
	missNext atomic.Bool // the next Get pretends the key is absent (a lost race)
	fail     atomic.Bool
}

func (k *kvSpy) Get(ctx context.Context, key string) (jetstream.KeyValueEntry, error) {
	k.gets.Add(1)
	if k.fail.Load() {
		return nil, errors.New("bucket unreachable")
	}
	if k.missNext.CompareAndSwap(true, false) {
		return nil, jetstream.ErrKeyNotFound
	}
	return k.KeyValue.Get(ctx, key)
}

func saltBucket(t *testing.T) jetstream.KeyValue {
	t.Helper()
	c := streamtest.Open(t, 2)
	kv, err := c.KV(context.Background(), viewcount.BucketSalts)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

func TestSaltsSharedAndRotating(t *testing.T) {
	ctx := context.Background()
	kv := saltBucket(t)
	a := NewSalts(kv, &countingRandom{next: 1}, discard())
	b := NewSalts(kv, &countingRandom{next: 100}, discard())
	day1 := time.Date(2026, 3, 1, 23, 59, 59, 0, time.UTC)

	s1, err := a.For(ctx, day1)
	if err != nil {
		t.Fatal(err)
	}
	if want := bytes.Repeat([]byte{1}, SaltLen); !bytes.Equal(s1, want) {
		t.Fatalf("first salt = %x, want %x", s1, want)
	}
	// Another process gets the same salt, not one of its own.
	s1b, err := b.For(ctx, day1.Add(-23*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(s1, s1b) {
		t.Fatalf("processes disagree: %x vs %x", s1, s1b)
	}
	// A time in another zone is placed by its UTC day.
	tokyo := time.FixedZone("JST", 9*3600)
	s1c, err := b.For(ctx, time.Date(2026, 3, 2, 8, 0, 0, 0, tokyo))
	if err != nil || !bytes.Equal(s1c, s1) {
		t.Fatalf("JST morning of 2 March is UTC 1 March: %x, %v", s1c, err)
	}

	// One second later it is another day, with a new salt, seen by both.
	s2, err := b.For(ctx, day1.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if want := bytes.Repeat([]byte{100}, SaltLen); !bytes.Equal(s2, want) {
		t.Fatalf("day-2 salt = %x, want %x", s2, want)
	}
	if s2a, err := a.For(ctx, day1.Add(time.Hour)); err != nil || !bytes.Equal(s2a, s2) {
		t.Fatalf("a's day-2 salt = %x, %v; want %x", s2a, err, s2)
	}
	// Yesterday's salt stays (late hits), both locally and in the bucket.
	if _, err := kv.Get(ctx, "2026-03-01"); err != nil {
		t.Fatalf("yesterday's salt: %v", err)
	}
}

func TestSaltsDeleteOld(t *testing.T) {
	ctx := context.Background()
	kv := saltBucket(t)
	for _, k := range []string{"2026-02-25", "2026-02-27", "2026-02-28", "not-a-date"} {
		if _, err := kv.Put(ctx, k, bytes.Repeat([]byte{9}, SaltLen)); err != nil {
			t.Fatal(err)
		}
	}
	s := NewSalts(kv, &countingRandom{next: 1}, discard())
	if _, err := s.For(ctx, time.Date(2026, 3, 1, 0, 0, 1, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	for key, kept := range map[string]bool{"2026-02-25": false, "2026-02-27": false, "2026-02-28": true, "2026-03-01": true, "not-a-date": true} {
		_, err := kv.Get(ctx, key)
		if kept && err != nil {
			t.Errorf("%s: %v, want kept", key, err)
		}
		if !kept && !errors.Is(err, jetstream.ErrKeyNotFound) {
			t.Errorf("%s: %v, want deleted", key, err)
		}
	}
}

func TestSaltsRaceAndCache(t *testing.T) {
	ctx := context.Background()
	spy := &kvSpy{KeyValue: saltBucket(t)}
	day := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	theirs := bytes.Repeat([]byte{42}, SaltLen)
	if _, err := spy.Create(ctx, "2026-03-01", theirs); err != nil {
		t.Fatal(err)
	}

	// Our Get misses, our Create loses to the process that stored theirs:
	// we must use theirs.
	spy.missNext.Store(true)
	s := NewSalts(spy, &countingRandom{next: 1}, discard())
	got, err := s.For(ctx, day)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, theirs) {
		t.Fatalf("after a lost race got %x, want the winner's %x", got, theirs)
	}

	// Cached: no more round trips, even with the bucket gone.
	before := spy.gets.Load()
	spy.fail.Store(true)
	for range 100 {
		if _, err := s.For(ctx, day.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	if n := spy.gets.Load() - before; n != 0 {
		t.Fatalf("%d bucket reads for a cached day", n)
	}
	// A new day with the bucket gone: ErrUnavailable.
	if _, err := s.For(ctx, day.Add(24*time.Hour)); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("uncached day, bucket down: %v, want ErrUnavailable", err)
	}
}

// Existing gives a day's salt only if it exists: it never makes one, a day
// found gone costs one round trip, and a bucket it cannot reach is an
// outage, not a deleted salt.
func TestSaltsExisting(t *testing.T) {
	ctx := context.Background()
	spy := &kvSpy{KeyValue: saltBucket(t)}
	kept := bytes.Repeat([]byte{42}, SaltLen)
	if _, err := spy.Put(ctx, "2026-03-01", kept); err != nil {
		t.Fatal(err)
	}
	s := NewSalts(spy, &countingRandom{next: 1}, discard())
	day := time.Date(2026, 3, 1, 23, 0, 0, 0, time.UTC)

	if salt, ok, err := s.Existing(ctx, day); err != nil || !ok || !bytes.Equal(salt, kept) {
		t.Fatalf("kept salt: %x %v %v", salt, ok, err)
	}
	gone := day.Add(-24 * time.Hour)
	for range 3 {
		if salt, ok, err := s.Existing(ctx, gone); err != nil || ok || salt != nil {
			t.Fatalf("gone salt: %x %v %v", salt, ok, err)
		}
	}
	if _, err := spy.Get(ctx, "2026-02-28"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("Existing made a salt: %v", err)
	}
	if n := spy.gets.Load(); n != 1+1+1 { // the kept day, the gone one once, the check above
		t.Errorf("%d bucket reads, want 3: both answers are remembered", n)
	}
	// What For made or read is what Existing gives, from the cache.
	today, err := s.For(ctx, day.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	spy.fail.Store(true)
	if salt, ok, err := s.Existing(ctx, day.Add(time.Hour)); err != nil || !ok || !bytes.Equal(salt, today) {
		t.Fatalf("today's salt from the cache: %x %v %v", salt, ok, err)
	}
	if salt, ok, err := s.Existing(ctx, day); err != nil || !ok || !bytes.Equal(salt, kept) {
		t.Fatalf("yesterday's salt from the cache: %x %v %v", salt, ok, err)
	}
	// An uncached day with the bucket gone: ErrUnavailable.
	fresh := NewSalts(spy, &countingRandom{next: 1}, discard())
	if _, _, err := fresh.Existing(ctx, day); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("bucket down: %v, want ErrUnavailable", err)
	}
}

package stream_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/stream"
	"github.com/viewcount/viewcount/internal/stream/streamtest"
)

// TestSiteHostnames: a site allows its domain and subdomains until its
// hostnames are set; a list set applies to views received from then on, in
// this process at once and in another once its watch has it, while views
// received before keep being judged by the list of their time (a replay
// judges them alike). Bad lists are refused; the history is bounded.
func TestSiteHostnames(t *testing.T) {
	ctx := context.Background()
	c := streamtest.Open(t, 1)
	var clock atomic.Int64
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	clock.Store(t0.UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	a, err := stream.OpenSites(ctx, c, now)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := stream.OpenSites(ctx, c, now) // another process's registry
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, _, err := a.Add(ctx, "www.example.com"); err != nil {
		t.Fatal(err)
	}
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	check := func(s *stream.Sites, host string, t1 time.Time, want bool) {
		t.Helper()
		if got := s.AllowsHost("www.example.com", host, t1); got != want {
			t.Errorf("AllowsHost(%q, %s) = %v, want %v", host, t1.Sub(t0), got, want)
		}
	}
	for _, s := range []*stream.Sites{a, b} {
		waitFor(t, 10*time.Second, "registered", func() bool { return s.Known("www.example.com") })
		check(s, "www.example.com", at(0), true)
		check(s, "example.com", at(0), true)
		check(s, "shop.example.com", at(0), true)
		check(s, "fraud.test", at(0), false)
		check(s, "localhost", at(0), false)
	}
	if a.AllowsHost("unknown.example", "unknown.example", at(0)) {
		t.Error("an unregistered site allows its own host")
	}
	site, err := a.Get(ctx, "www.example.com")
	if err != nil || !slices.Equal(site.Hostnames(), []string{"example.com", "*.example.com"}) {
		t.Fatalf("default hostnames %q, %v", site.Hostnames(), err)
	}

	clock.Store(at(time.Minute).UnixNano())
	site, err = a.SetHostnames(ctx, "www.example.com", []string{"Example.com", "*.example.com", "example-com.translate.goog"})
	if err != nil || !slices.Equal(site.Hostnames(), []string{"example.com", "*.example.com", "example-com.translate.goog"}) {
		t.Fatalf("SetHostnames: %q, %v", site.Hostnames(), err)
	}
	check(a, "example-com.translate.goog", at(time.Minute), true) // at once here
	check(a, "example-com.translate.goog", at(time.Minute-time.Millisecond), false)
	waitFor(t, 10*time.Second, "the new list", func() bool { return b.AllowsHost("www.example.com", "example-com.translate.goog", at(2*time.Minute)) })
	check(b, "example-com.translate.goog", at(30*time.Second), false) // received before: the old list
	check(b, "shop.example.com", at(2*time.Minute), true)

	// Narrowing: subdomains no longer count from then on; before, they did.
	clock.Store(at(2 * time.Minute).UnixNano())
	if _, err := a.SetHostnames(ctx, "www.example.com", []string{"www.example.com"}); err != nil {
		t.Fatal(err)
	}
	check(a, "shop.example.com", at(2*time.Minute), false)
	check(a, "shop.example.com", at(90*time.Second), true)
	check(a, "www.example.com", at(3*time.Minute), true)

	// The list in force again is no new version.
	before, _ := a.Get(ctx, "www.example.com")
	if _, err := a.SetHostnames(ctx, "www.example.com", []string{"WWW.example.com."}); err != nil {
		t.Fatal(err)
	}
	if after, _ := a.Get(ctx, "www.example.com"); len(after.Hosts) != len(before.Hosts) {
		t.Errorf("setting the same list added a version: %d → %d", len(before.Hosts), len(after.Hosts))
	}

	for _, bad := range [][]string{nil, {"localhost"}, {"127.0.0.1"}, {"example.com:8080"}, {"*.com"}, {"a.example", "http://b.example/"}} {
		if _, err := a.SetHostnames(ctx, "www.example.com", bad); !errors.Is(err, viewcount.ErrBadHostname) {
			t.Errorf("SetHostnames(%q): %v, want ErrBadHostname", bad, err)
		}
	}
	if _, err := a.SetHostnames(ctx, "nope.example", []string{"nope.example"}); !errors.Is(err, viewcount.ErrSiteUnknown) {
		t.Errorf("unknown site: %v", err)
	}

	// Bounded history: the oldest kept version then stands for all before.
	for i := range 40 {
		clock.Store(at(time.Hour + time.Duration(i)*time.Minute).UnixNano())
		if _, err := a.SetHostnames(ctx, "www.example.com", []string{fmt.Sprintf("h%d.example.com", i)}); err != nil {
			t.Fatal(err)
		}
	}
	site, _ = a.Get(ctx, "www.example.com")
	if len(site.Hosts) != 16 || !site.Hosts[0].Since.IsZero() {
		t.Fatalf("history: %d versions, oldest since %v", len(site.Hosts), site.Hosts[0].Since)
	}
	check(a, "h24.example.com", at(0), true) // the oldest kept
	check(a, "h39.example.com", at(time.Hour+39*time.Minute), true)
	check(a, "h38.example.com", at(time.Hour+39*time.Minute), false)

	// Deleted and added again: a new registration, with the default list.
	if err := a.Delete(ctx, "www.example.com"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Add(ctx, "www.example.com"); err != nil {
		t.Fatal(err)
	}
	check(a, "shop.example.com", at(2*time.Hour), true)
}

// BenchmarkAllowsHost is what the foreign_origin rule costs a validator per
// view naming its page: a read-locked map lookup and a walk of the list.
func BenchmarkAllowsHost(b *testing.B) {
	ctx := context.Background()
	s, err := stream.OpenSites(ctx, streamtest.Open(b, 1), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, _, err := s.Add(ctx, "example.com"); err != nil {
		b.Fatal(err)
	}
	at := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		if !s.AllowsHost("example.com", "www.example.com", at) || s.AllowsHost("example.com", "fraud.test", at) {
			b.Fatal("wrong")
		}
	}
}

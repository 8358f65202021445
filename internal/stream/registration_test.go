package stream_test

import (
	"context"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/stream"
	"github.com/viewcount/viewcount/internal/stream/streamtest"
)

// TestRegistrations: every registration of a site has its own start, from
// the registry's clock to the millisecond, seen by every process; a view
// belongs to the registration it was received under, so one received
// before a delete and re-add belongs to neither (found by an attacker's
// probe: such a view counted for the re-added site).
func TestRegistrations(t *testing.T) {
	ctx := context.Background()
	c := streamtest.Open(t, 1)
	at := time.Date(2026, 11, 30, 10, 0, 0, 123_456_789, time.UTC)
	now := func() time.Time { return at }
	a, err := stream.OpenSites(ctx, c, now)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := stream.OpenSites(ctx, c, nil) // another process: its clock does not date a's registrations
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	site, _, err := a.Add(ctx, "reg.example")
	if err != nil {
		t.Fatal(err)
	}
	first := at.Truncate(time.Millisecond)
	if !site.Created.Equal(first) {
		t.Fatalf("Created %s, want %s", site.Created, first)
	}
	waitFor(t, 5*time.Second, "the watch delivering the add", func() bool { s, ok := b.Registered("reg.example"); return ok && s.Equal(first) })
	inFlight := first.Add(400 * time.Millisecond) // a view received after the registration
	for _, r := range []viewcount.Registrations{a, b} {
		if !viewcount.InRegistration(r, "reg.example", inFlight) || viewcount.InRegistration(r, "reg.example", first.Add(-time.Millisecond)) {
			t.Fatal("a view of the registration is not in it, or one from before is")
		}
	}
	if err := a.Delete(ctx, "reg.example"); err != nil {
		t.Fatal(err)
	}
	at = at.Add(600 * time.Millisecond) // re-added within the same second
	if _, _, err := a.Add(ctx, "reg.example"); err != nil {
		t.Fatal(err)
	}
	second := at.Truncate(time.Millisecond)
	waitFor(t, 5*time.Second, "the watch delivering the re-add", func() bool { s, ok := b.Registered("reg.example"); return ok && s.Equal(second) })
	for _, r := range []viewcount.Registrations{a, b} {
		if viewcount.InRegistration(r, "reg.example", inFlight) || !viewcount.InRegistration(r, "reg.example", second) {
			t.Fatal("the view in flight during the delete belongs to the new registration, or the new one's own views do not")
		}
	}
}

// TestDeleteWaitsForHolds: a Writer holds the registry from checking a
// batch against it until the batch is stored (Sites.Hold); Delete waits
// for it, so the deletion of the site's rows that follows Delete finds
// the batch in the store, and a batch checked later sees the site gone.
// Feeds hold it too, and the deletion quiesces it between views_raw and
// the rollups.
func TestDeleteWaitsForHolds(t *testing.T) {
	ctx := context.Background()
	c := streamtest.Open(t, 1)
	s, err := stream.OpenSites(ctx, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, _, err := s.Add(ctx, "held.example"); err != nil {
		t.Fatal(err)
	}
	release := s.Hold() // a batch checked, being inserted
	done := make(chan error, 1)
	go func() { done <- s.Delete(ctx, "held.example") }()
	// While the hold lasts, Delete has not removed the site. (Were it not
	// waiting, it would be done in a few milliseconds: this wait can only
	// let a broken Delete through, never fail a working one.)
	select {
	case err := <-done:
		t.Fatalf("Delete returned while a batch was held: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	if !s.Known("held.example") {
		t.Fatal("the site left the registry while a batch was held")
	}
	release()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Delete still waiting after the hold was released")
	}
	if s.Known("held.example") {
		t.Fatal("deleted site still known")
	}
	s.Hold()() // nothing left to wait for

	// Quiesce waits for the holds taken before it (a feed in flight), and
	// returns at once when there are none.
	s.Quiesce()
	release = s.Hold()
	quiet := make(chan struct{})
	go func() { s.Quiesce(); close(quiet) }()
	select {
	case <-quiet:
		t.Fatal("Quiesce returned while a feed was held")
	case <-time.After(200 * time.Millisecond):
	}
	release()
	select {
	case <-quiet:
	case <-time.After(10 * time.Second):
		t.Fatal("Quiesce still waiting after the hold was released")
	}
}

package stream_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/stream"
	"github.com/viewcount/viewcount/internal/stream/streamtest"
)

func TestSitesManage(t *testing.T) {
	ctx := context.Background()
	c := streamtest.Open(t, 1)
	a, err := stream.OpenSites(ctx, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := stream.OpenSites(ctx, c, nil) // another process's registry
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, d := range []string{"b.example", "a.example", "c.example"} {
		if _, _, err := a.Add(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	list, err := b.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 || list[0].Domain != "a.example" || list[1].Domain != "b.example" || list[2].Domain != "c.example" {
		t.Fatalf("List = %+v, want a, b, c", list)
	}

	// Rotation: the new token works and the old does not, read by any process.
	// The share link goes with the old token, unless kept.
	_, old, _ := a.Add(ctx, "rot.example")
	link, err := a.CreateShare(ctx, "rot.example")
	if err != nil {
		t.Fatal(err)
	}
	fresh, shared, err := a.RotateToken(ctx, "rot.example", false)
	if err != nil {
		t.Fatal(err)
	}
	site, err := b.Get(ctx, "rot.example")
	if err != nil || site.CheckToken(old) || !site.CheckToken(fresh) || len(fresh) != 52 || fresh[:4] != "vcs_" {
		t.Fatalf("after rotation: %v old=%v new=%v %q", err, site.CheckToken(old), site.CheckToken(fresh), fresh[:4])
	}
	if !shared || site.CheckShareToken(link) || site.ShareHash != "" {
		t.Fatalf("after rotation: shared=%v, the link still works=%v", shared, site.CheckShareToken(link))
	}
	if link, err = a.CreateShare(ctx, "rot.example"); err != nil {
		t.Fatal(err)
	}
	if _, shared, err = a.RotateToken(ctx, "rot.example", true); err != nil || !shared {
		t.Fatalf("rotation keeping the link: shared=%v %v", shared, err)
	}
	if site, _ := b.Get(ctx, "rot.example"); !site.CheckShareToken(link) {
		t.Fatal("rotation keeping the link revoked it")
	}

	// Time zones are validated, stored, and read back by another process.
	if _, err := a.SetTimezone(ctx, "a.example", "Europe/Berlin"); err != nil {
		t.Fatal(err)
	}
	if site, _ := b.Get(ctx, "a.example"); site.Timezone != "Europe/Berlin" {
		t.Fatalf("timezone read back %q", site.Timezone)
	}
	if site, _ := a.SetTimezone(ctx, "b.example", "UTC"); site.Timezone != "" {
		t.Errorf("UTC stored as %q, want the default \"\"", site.Timezone)
	}
	for _, z := range []string{"", "Local", "Mars/Olympus", "../etc/passwd", "Europe/Berlin "} {
		if _, err := a.SetTimezone(ctx, "a.example", z); !errors.Is(err, viewcount.ErrBadTimezone) {
			t.Errorf("SetTimezone(%q): %v, want ErrBadTimezone", z, err)
		}
	}
	if _, err := a.SetTimezone(ctx, "none.example", "UTC"); !errors.Is(err, viewcount.ErrSiteUnknown) {
		t.Errorf("SetTimezone of an unknown site: %v", err)
	}

	// Share tokens: one at a time, hashed, revocable.
	s1, err := a.CreateShare(ctx, "a.example")
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := a.CreateShare(ctx, "a.example")
	site, _ = b.Get(ctx, "a.example")
	if site.CheckShareToken(s1) || !site.CheckShareToken(s2) || site.CheckToken(s2) || site.Timezone != "Europe/Berlin" {
		t.Fatalf("after two shares: first=%v second=%v %+v", site.CheckShareToken(s1), site.CheckShareToken(s2), site)
	}
	if err := a.RevokeShare(ctx, "a.example"); err != nil {
		t.Fatal(err)
	}
	if site, _ = b.Get(ctx, "a.example"); site.CheckShareToken(s2) || site.CheckShareToken("") {
		t.Fatal("revoked share token still accepted")
	}

	// Delete: gone for both processes, and the name can be registered again.
	if err := a.Delete(ctx, "c.example"); err != nil {
		t.Fatal(err)
	}
	if a.Known("c.example") {
		t.Error("deleting process still knows c.example")
	}
	waitFor(t, 5*time.Second, "the watch delivering the delete", func() bool { return !b.Known("c.example") })
	if _, err := b.Get(ctx, "c.example"); !errors.Is(err, viewcount.ErrSiteUnknown) {
		t.Errorf("Get after delete: %v", err)
	}
	if err := a.Delete(ctx, "c.example"); !errors.Is(err, viewcount.ErrSiteUnknown) {
		t.Errorf("second delete: %v, want ErrSiteUnknown", err)
	}
	if _, _, err := a.RotateToken(ctx, "c.example", false); !errors.Is(err, viewcount.ErrSiteUnknown) {
		t.Errorf("rotate after delete: %v, want ErrSiteUnknown", err)
	}
	if _, _, err := a.Add(ctx, "c.example"); err != nil {
		t.Fatalf("re-add after delete: %v", err)
	}
	waitFor(t, 5*time.Second, "the watch delivering the re-add", func() bool { return b.Known("c.example") })
	if list, _ := a.List(ctx); len(list) != 4 {
		t.Errorf("List after re-add: %d sites, want 4", len(list))
	}
}

// TestSitesConcurrentChanges: rotations, time zones and share links changed
// at once from two registries (two processes) never undo one another: each
// change is a compare-and-set on the entry's revision.
func TestSitesConcurrentChanges(t *testing.T) {
	ctx := context.Background()
	c := streamtest.Open(t, 1)
	regs := make([]*stream.Sites, 2)
	for i := range regs {
		var err error
		if regs[i], err = stream.OpenSites(ctx, c, nil); err != nil {
			t.Fatal(err)
		}
		defer regs[i].Close()
	}
	if _, _, err := regs[0].Add(ctx, "busy.example"); err != nil {
		t.Fatal(err)
	}
	const rounds = 30
	zones := []string{"Europe/Berlin", "Asia/Tokyo", "America/New_York"}
	var (
		wg               sync.WaitGroup
		token, share     string
		rotErr, shareErr error
		tzErr            error
	)
	wg.Add(3)
	go func() {
		defer wg.Done()
		for range rounds {
			// Keeping the link: the check is that no change undoes another.
			if token, _, rotErr = regs[0].RotateToken(ctx, "busy.example", true); rotErr != nil {
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for range rounds {
			if share, shareErr = regs[1].CreateShare(ctx, "busy.example"); shareErr != nil {
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for i := range rounds {
			if _, tzErr = regs[i%2].SetTimezone(ctx, "busy.example", zones[i%len(zones)]); tzErr != nil {
				return
			}
		}
	}()
	wg.Wait()
	if err := errors.Join(rotErr, shareErr, tzErr); err != nil {
		t.Fatal(err)
	}
	site, err := regs[1].Get(ctx, "busy.example")
	if err != nil {
		t.Fatal(err)
	}
	if want := zones[(rounds-1)%len(zones)]; !site.CheckToken(token) || !site.CheckShareToken(share) || site.Timezone != want {
		t.Fatalf("last changes lost: token=%v share=%v timezone=%q (want %q)", site.CheckToken(token), site.CheckShareToken(share), site.Timezone, want)
	}
}

// TestSitesChangesPersist: a time zone, a rotated token and a share link
// survive a restart of the stream server.
func TestSitesChangesPersist(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c := streamtest.OpenDir(t, dir, 1)
	s, err := stream.OpenSites(ctx, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Add(ctx, "keep.example"); err != nil {
		t.Fatal(err)
	}
	token, _, _ := s.RotateToken(ctx, "keep.example", false)
	share, _ := s.CreateShare(ctx, "keep.example")
	if _, err := s.SetTimezone(ctx, "keep.example", "Asia/Kolkata"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	c.Close()

	c = streamtest.OpenDir(t, dir, 1)
	s, err = stream.OpenSites(ctx, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	site, err := s.Get(ctx, "keep.example")
	if err != nil || site.Timezone != "Asia/Kolkata" || !site.CheckToken(token) || !site.CheckShareToken(share) {
		t.Fatalf("after restart: %v %+v token=%v share=%v", err, site, site.CheckToken(token), site.CheckShareToken(share))
	}
}

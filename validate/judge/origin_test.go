package judge

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	vcstream "github.com/viewcount/viewcount/internal/stream"
	"github.com/viewcount/viewcount/internal/stream/streamtest"
)

// AllowsHost gives the fixed test registry its sites' default hostnames
// (for sites without "www.": the domain and its subdomains), without
// allocating: BenchmarkValidate judges through it, where the registry
// (internal/stream.Sites) keeps its lists ready.
func (s sitesOf) AllowsHost(site, host string, _ time.Time) bool {
	n, m := len(host), len(site)
	return s[site] && (host == site || n > m && host[n-m-1] == '.' && host[n-m:] == site)
}

// TestForeignOrigin: a browser view from a page on a host its site does not
// allow is rejected as foreign_origin (found by trying it as a new user
// would: a page on http://localhost:3000, and an unrelated site's page,
// carrying example.com's tag counted for example.com). A view that names no
// page is not: its Referer was stripped, and it is judged as before.
func TestForeignOrigin(t *testing.T) {
	r := newTestRules(t, Config{})
	var n uint64
	f := func(site, origin string, want viewcount.Reason) {
		t.Helper()
		n++ // a new visitor and id each time: only the origin decides
		e := viewcount.Event{Time: t0.Add(time.Duration(n) * time.Second), Site: site, Page: "/", UA: uaFirefoxWin,
			ID: fmt.Sprint(n), Visitor: n, Network: netID(n), Source: viewcount.SourcePixel, Origin: origin, Headers: realHeaders(uaFirefoxWin)}
		if got := r.Judge(&e); got != want {
			t.Errorf("view of %s from a page on %q: %s, want %s", site, origin, got, want)
		}
	}
	f("example.com", "example.com", viewcount.Valid)
	f("example.com", "www.example.com", viewcount.Valid)
	f("example.com", "blog.shop.example.com", viewcount.Valid)
	f("example.com", "", viewcount.Valid) // no evidence
	f("example.com", "localhost", viewcount.ForeignOrigin)
	f("example.com", "127.0.0.1", viewcount.ForeignOrigin)
	f("example.com", "::1", viewcount.ForeignOrigin)
	f("example.com", "fraud.test", viewcount.ForeignOrigin)
	f("example.com", "notexample.com", viewcount.ForeignOrigin)
	f("example.com", "example.com.evil.test", viewcount.ForeignOrigin)
	f("example.com", "other.org", viewcount.ForeignOrigin) // another registered site
	f("other.org", "other.org", viewcount.Valid)
	f("unknown.net", "unknown.net", viewcount.UnknownSite) // the site comes first
	// Earlier, stateless rules still decide first.
	n++
	bot := viewcount.Event{Time: t0.Add(time.Hour), Site: "example.com", Page: "/", UA: "curl/8.5.0", ID: "b", Visitor: n, Origin: "fraud.test"}
	if got := r.Judge(&bot); got != viewcount.BotUA {
		t.Errorf("a bot from a foreign page: %s, want bot_ua", got)
	}
	// A lookup keeping no hostnames allows every host.
	plain, err := NewRules(Config{}, registry{"example.com": t0.Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	e := viewcount.Event{Time: t0, Site: "example.com", Page: "/", UA: uaFirefoxWin, ID: "p", Visitor: 1, Origin: "fraud.test", Headers: realHeaders(uaFirefoxWin)}
	if got := plain.Judge(&e); got != viewcount.Valid {
		t.Errorf("without hostnames: %s, want valid", got)
	}
}

// TestForeignOriginProperty: over realistic streams (every rule in play,
// most views naming their page, some stuffed into other pages) judged
// against the real registry (NATS) while an operator changes the site's
// hostnames as the stream goes, every view is judged by the list in force
// when it was received: a view naming a host that list does not allow is
// foreign_origin (or an earlier, stateless rejection), no other view ever
// is; a foreign view touches no state (the verdicts of the rest are those
// of the same stream with it rejected as empty_ua); and judging the stream again later, after
// more changes, gives the same verdicts (a replay).
func TestForeignOriginProperty(t *testing.T) {
	stateless := map[viewcount.Reason]bool{viewcount.EmptyUA: true, viewcount.BotUA: true, viewcount.Headless: true,
		viewcount.BadHints: true, viewcount.HeaderMismatch: true, viewcount.Datacenter: true, viewcount.UnknownSite: true}
	ctx := context.Background()
	lists := [][]string{{"example.com", "*.example.com"}, {"www.example.com"}, {"*"}, {"example.com", "fraud.test"}, {"shop.example.com"}}
	for seed := range uint64(3) {
		evs := stream(4000, 2*time.Hour, 300, seed)
		var clock atomic.Int64
		clock.Store(evs[0].Time.Add(-time.Hour).UnixMilli())
		sites, err := vcstream.OpenSites(ctx, streamtest.Open(t, 1), func() time.Time { return time.UnixMilli(clock.Load()) })
		if err != nil {
			t.Fatal(err)
		}
		defer sites.Close()
		for _, s := range []string{"example.com", "other.org"} {
			if _, _, err := sites.Add(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		// The list in force at each time, as the test keeps it.
		type version struct {
			since time.Time
			hosts []string
		}
		history := []version{{time.Time{}, lists[0]}}
		listAt := func(at time.Time) []string {
			for i := len(history) - 1; i > 0; i-- {
				if !at.Before(history[i].since) {
					return history[i].hosts
				}
			}
			return history[0].hosts
		}
		rnd := rand.New(rand.NewPCG(seed, 7))
		r, err := NewRules(Config{}, sites)
		if err != nil {
			t.Fatal(err)
		}
		first := make([]viewcount.Reason, len(evs))
		foreign := 0
		var latest time.Time // the latest receive time judged: a change made now comes after it
		for i := range evs {
			e := &evs[i]
			if e.Time.After(latest) {
				latest = e.Time
			}
			if rnd.IntN(500) == 0 && len(history) < 14 { // the operator changes example.com's list, now
				clock.Store(latest.Add(time.Duration(1+rnd.IntN(2000)) * time.Millisecond).UnixMilli())
				hosts := lists[rnd.IntN(len(lists))]
				if _, err := sites.SetHostnames(ctx, "example.com", hosts); err != nil {
					t.Fatal(err)
				}
				if site, _ := sites.Get(ctx, "example.com"); len(site.Hosts) > 0 && !slices.Equal(hosts, history[len(history)-1].hosts) {
					history = append(history, version{site.Hosts[len(site.Hosts)-1].Since, hosts})
				}
			}
			got := r.Judge(e)
			first[i] = got
			allowed := e.Site != "example.com" && viewcount.HostAllowed(viewcount.DefaultHostnames(e.Site), e.Origin) ||
				e.Site == "example.com" && viewcount.HostAllowed(listAt(e.Time), e.Origin)
			isForeign := e.Origin != "" && e.Site != "unknown.net" && !allowed
			switch {
			case isForeign && got != viewcount.ForeignOrigin && !stateless[got]:
				t.Fatalf("seed %d, event %d (%s from %q at %s, list %q): %s, want foreign_origin", seed, i, e.Site, e.Origin, e.Time, listAt(e.Time), got)
			case !isForeign && got == viewcount.ForeignOrigin:
				t.Fatalf("seed %d, event %d (%s from %q, list %q): foreign_origin", seed, i, e.Site, e.Origin, listAt(e.Time))
			}
			if got == viewcount.ForeignOrigin {
				foreign++
			}
		}
		if foreign == 0 || len(history) < 3 {
			t.Fatalf("seed %d: %d foreign views, %d list versions: the test exercises too little", seed, foreign, len(history))
		}
		// Foreign views leave no state behind (as no stateless rejection
		// does; all of them advance the rules' clock): made empty_ua
		// instead, every other verdict is the same.
		swapped := slices.Clone(evs)
		for i := range swapped {
			if first[i] == viewcount.ForeignOrigin {
				swapped[i].UA = ""
			}
		}
		r2, _ := NewRules(Config{}, sites)
		for i, got := range judgeAll(r2, swapped) {
			if first[i] != viewcount.ForeignOrigin && got != first[i] {
				t.Fatalf("seed %d, event %d: %s, %s with the foreign views rejected otherwise: they left state behind", seed, i, first[i], got)
			}
		}
		// A replay, after the list changed again, judges alike (the
		// registry keeps 16 versions, more than this stream made).
		clock.Store(evs[len(evs)-1].Time.Add(time.Hour).UnixMilli())
		if _, err := sites.SetHostnames(ctx, "example.com", []string{"nothing.example"}); err != nil {
			t.Fatal(err)
		}
		r3, _ := NewRules(Config{}, sites)
		if again := judgeAll(r3, evs); !slices.Equal(again, first) {
			t.Fatalf("seed %d: a replay judges differently", seed)
		}
		t.Logf("seed %d: %d foreign of %d views, %d list versions", seed, foreign, len(evs), len(history))
	}
}

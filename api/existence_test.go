package api

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestPublicReadsSameWorkForUnknownSites: the public reads (/count,
// /counts, the badge) must not tell a registered site from one that is
// not, neither by their answer nor by the work behind it, which a client
// can time. Found by an attacker's probe: an unregistered site was
// answered in 0.09 ms, straight from a shortcut, and a registered site's
// unseen page in 2.4 ms, from the store, with identical bodies.
//
// Not a timing test (the machine is noisy): it checks the cause, that
// both go through the same path. A random sequence of reads (random pages,
// whole-site reads, batches, badges, with the clock moving and the
// snapshot refreshing between them) is replayed read for read on a
// registered site and on an unregistered one; every read must cost the
// same store queries and the same snapshot entries on both, and, where the
// registered site has no views to show, answer the same body but for the
// name.
func TestPublicReadsSameWorkForUnknownSites(t *testing.T) {
	f := newFixture(t)
	const sites = 3
	registered := func(i int) string { return fmt.Sprintf("r%d.example", i) }
	unknown := func(i int) string { return fmt.Sprintf("u%d.example", i) }
	for i := range sites {
		if _, _, err := f.sites.Add(context.Background(), registered(i)); err != nil {
			t.Fatal(err)
		}
		f.views(t, registered(i), "/hot", 3+i) // only /hot has views
	}
	pages := []string{"/", "/a", "/b", "/hot", "/never/seen"}
	for _, seed := range []uint64{1, 2, 3} {
		rng := rand.New(rand.NewPCG(seed, 2026))
		for step := range 150 {
			i := rng.IntN(sites)
			var path func(site string) string
			quiet := true // the registered site has nothing to show
			switch op := rng.IntN(6); op {
			case 0, 1: // one page, or the whole site
				p := pages[rng.IntN(len(pages))]
				if op == 1 {
					p = ""
				}
				quiet = p != "/hot" && p != ""
				path = func(site string) string {
					if p == "" {
						return "/v1/sites/" + site + "/count"
					}
					return "/v1/sites/" + site + "/count?page=" + url.QueryEscape(p)
				}
			case 2: // a batch
				var q []string
				for range 1 + rng.IntN(4) {
					p := pages[rng.IntN(len(pages))]
					quiet = quiet && p != "/hot"
					q = append(q, "page="+url.QueryEscape(p))
				}
				path = func(site string) string { return "/v1/sites/" + site + "/counts?" + strings.Join(q, "&") }
			case 3: // a badge
				p := pages[rng.IntN(len(pages))]
				quiet = p != "/hot"
				path = func(site string) string { return "/badge/" + site + ".svg?page=" + url.QueryEscape(p) }
			case 4: // time passes: readings go stale, entries idle
				f.clock.t = f.clock.t.Add(time.Duration(rng.IntN(20)) * time.Second)
				continue
			case 5:
				f.snap.refresh(context.Background())
				continue
			}
			read := func(site string) (queries int64, entries int, body string) {
				before := len(f.entries())
				var b string
				queries = f.queries(func() {
					w := f.get(t, path(site))
					if w.Code != 200 {
						t.Fatalf("seed %d step %d: %s: %d %s", seed, step, path(site), w.Code, w.Body)
					}
					b = w.Body.String()
				})
				return queries, len(f.entries()) - before, strings.ReplaceAll(b, site, "SITE")
			}
			rq, re, rb := read(registered(i))
			uq, ue, ub := read(unknown(i))
			if rq != uq || re != ue {
				t.Fatalf("seed %d step %d: %s: registered %d store queries, %d new snapshot entries; unregistered %d, %d",
					seed, step, path("SITE"), rq, re, uq, ue)
			}
			if quiet && rb != ub {
				t.Fatalf("seed %d step %d: %s: registered answers\n%s\nunregistered\n%s", seed, step, path("SITE"), rb, ub)
			}
		}
	}
}

// entries returns the snapshot's keys, under its lock.
func (f *fixture) entries() []key {
	f.snap.mu.RLock()
	defer f.snap.mu.RUnlock()
	out := make([]key, 0, len(f.snap.entries))
	for k := range f.snap.entries {
		out = append(out, k)
	}
	return out
}

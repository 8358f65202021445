package judge

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
)

// registry is a SiteLookup the test changes as it goes: site → the start
// of its current registration.
type registry map[string]time.Time

func (r registry) Registered(site string) (time.Time, bool) { since, ok := r[site]; return since, ok }

// TestViewsCountOnlyForTheirRegistration: a view counts only for the
// registration of its site it was received under (found by an attacker's
// probe: a view in flight while its site was deleted and added again
// counted for the new registration). Property: over realistic streams
// (every rule in play) with the registry changing under them (sites
// deleted, added again at a later time, added for the first time), no
// view received while its site was not registered, or before its current
// registration began, is ever judged anything that counts or touches the
// state: it is UnknownSite, or a stateless rejection that comes before
// that check (a bot, a datacenter address…). And every view of the
// current registration is judged as if nothing had happened: never
// UnknownSite.
func TestViewsCountOnlyForTheirRegistration(t *testing.T) {
	stateless := map[viewcount.Reason]bool{viewcount.EmptyUA: true, viewcount.BotUA: true, viewcount.Headless: true,
		viewcount.BadHints: true, viewcount.HeaderMismatch: true, viewcount.Datacenter: true, viewcount.UnknownSite: true}
	for seed := range uint64(4) {
		rnd := rand.New(rand.NewPCG(seed, 99))
		evs := stream(4000, 2*time.Hour, 300, seed)
		reg := registry{"example.com": evs[0].Time.Add(-time.Hour)}
		r, err := NewRules(Config{}, reg)
		if err != nil {
			t.Fatal(err)
		}
		changes, outside := 0, 0
		for i := range evs {
			e := &evs[i]
			if rnd.IntN(200) == 0 { // the registry changes
				changes++
				site := []string{"example.com", "other.org"}[rnd.IntN(2)]
				if _, ok := reg[site]; ok && rnd.IntN(2) == 0 {
					delete(reg, site)
				} else {
					// Added (again) at about this point of the stream:
					// a little before or after this view's receive time,
					// since views arrive up to seconds out of order.
					reg[site] = e.Time.Add(time.Duration(rnd.IntN(20000)-10000) * time.Millisecond)
				}
			}
			since, ok := reg[e.Site]
			in := ok && !e.Time.Before(since)
			got := r.Judge(e)
			switch {
			case !in && !stateless[got]:
				t.Fatalf("seed %d, event %d (%s at %s, registration since %s, registered %v): %s, want unknown_site",
					seed, i, e.Site, e.Time.Format(time.RFC3339Nano), since.Format(time.RFC3339Nano), ok, got)
			case in && got == viewcount.UnknownSite:
				t.Fatalf("seed %d, event %d (%s at %s, registration since %s): unknown_site for a view of the registration",
					seed, i, e.Site, e.Time.Format(time.RFC3339Nano), since.Format(time.RFC3339Nano))
			}
			if !in {
				outside++
			}
		}
		if changes < 5 || outside < 100 || outside > len(evs)-100 {
			t.Fatalf("seed %d: %d registry changes, %d of %d views outside a registration: the stream proves little", seed, changes, outside, len(evs))
		}
	}
}

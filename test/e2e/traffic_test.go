//go:build !race

package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/cmd/vcdev/loadgen"
	"github.com/viewcount/viewcount/cmd/viewcount/app"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/test/apptest"
)

// testClock is the process clock of a traffic test: it follows the traffic
// model's timeline, so an hour of visits sent in seconds carries the event
// times real visitors would have produced.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// TestTrafficMix measures filtering: the labelled mix of package loadgen
// (real-browser visitors with realistic weights, reloads, retries, many bot
// families, automation, a flood, a UA-rotating farm on one /24, datacenter
// hits, referrer spam, an unknown site) goes through HTTP into the real
// embedded stack; the verdicts stored in views_raw are joined back to the
// labels by event id. Run it with -v for the table quoted in docs/invalid-traffic.md:
//
//	go test ./test/e2e -run TestTrafficMix -v
func TestTrafficMix(t *testing.T) {
	mix := loadgen.DefaultMix()
	hosting, err := loadgen.HostingFilter("", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	mix.Hosting = hosting // as `vcdev loadgen` does: the server judges those datacenter
	dcFile := filepath.Join(t.TempDir(), "datacenter.txt")
	var dc strings.Builder
	for _, p := range mix.DatacenterCIDRs {
		dc.WriteString(p.String() + "\n")
	}
	if err := os.WriteFile(dcFile, []byte(dc.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	gen, err := loadgen.NewGenerator(mix, rand.New(rand.NewPCG(2026, 11)))
	if err != nil {
		t.Fatal(err)
	}
	rounds := 2
	if testing.Short() {
		rounds = 1
	}
	hits := gen.All(rounds * roundSize(t, mix))

	// The traffic sits inside one UTC day, yesterday's morning: visitor ids
	// rotate at midnight (docs/engagement.md, Visits), so a reload sent across
	// it is a new visitor's first view and counts. Placed by the wall clock
	// (now minus the mix), a run started just after midnight counted a few.
	base := time.Now().UTC().Truncate(24 * time.Hour).Add(-24*time.Hour + 6*time.Hour)
	clock := &testClock{t: base}
	m := apptest.StartWith(t, t.TempDir(), apptest.NewDB(), func(c *app.Config) { c.Ingest.DatacenterLists = []string{dcFile} }, clock.now)
	c := apptest.NewClient(t, m)
	for _, s := range mix.Sites {
		c.AddSite(s)
	}

	var tally loadgen.Tally
	for i := range hits {
		h := &hits[i]
		clock.set(base.Add(h.At))
		req, err := h.Request(c.Base)
		if err != nil {
			t.Fatal(err)
		}
		if code, body := c.Do(req); code != http.StatusOK && code != http.StatusAccepted {
			t.Fatalf("hit %d (%s): %d %s", i, h.ID, code, body)
		}
		tally.Add(h)
	}
	// Past the settle window: quiet partitions tick and release held views.
	clock.set(base.Add(hits[len(hits)-1].At + 5*time.Minute))

	observed := map[loadgen.Class]map[viewcount.Reason]int64{}
	apptest.Eventually(t, 60*time.Second, func() string {
		res, err := m.Store.Query(context.Background(), queries.Text(queries.Verdicts), nil)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(res.TextRows())) < tally.Total() {
			return fmt.Sprintf("%d of %d events in views_raw", len(res.TextRows()), tally.Total())
		}
		clear(observed)
		for _, r := range res.TextRows() {
			cl, ok := loadgen.ClassOf(r[3])
			if !ok {
				t.Fatalf("stored event id %q carries no class", r[3])
			}
			if observed[cl] == nil {
				observed[cl] = map[viewcount.Reason]int64{}
			}
			observed[cl][viewcount.Reason(r[4])]++
		}
		return ""
	})
	score := tally.Score(observed)
	t.Log("\n" + scoreTable(score, &tally))

	if score.Missing != 0 {
		t.Errorf("%d events missing from views_raw", score.Missing)
	}
	human := score.Classes[loadgen.Human]
	if recall := float64(min(human.Valid, human.WantValid)) / float64(human.WantValid); recall < 0.995 {
		t.Errorf("human first views counted: %.2f%%, want ≥ 99.5%%", 100*recall)
	}
	if dup := human.Verdicts[viewcount.DuplicateID]; dup != tally.Retries[loadgen.Human] {
		t.Errorf("retries removed as duplicate_id: %d of %d, want all", dup, tally.Retries[loadgen.Human])
	}
	if rl := score.Classes[loadgen.Reload]; rl.Valid != 0 {
		t.Errorf("reloads counted: %d of %d, want 0", rl.Valid, rl.Sent)
	}
	var invalid, rejected int64
	for _, cl := range loadgen.Classes {
		if cl.Valid() {
			continue
		}
		cs := score.Classes[cl]
		invalid += cs.Sent
		rejected += cs.Sent - cs.Valid
	}
	if share := float64(rejected) / float64(invalid); share < 0.99 {
		t.Errorf("invalid traffic rejected: %.2f%%, want ≥ 99%%", 100*share)
	}
}

// roundSize is how many hits one round of the mix holds (the generator
// emits whole rounds; asking for exactly that many keeps sessions whole).
func roundSize(t *testing.T, mix loadgen.Mix) int {
	g, err := loadgen.NewGenerator(mix, rand.New(rand.NewPCG(2026, 11)))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for h := g.Next(); h.At < mix.Duration; h = g.Next() {
		n++
	}
	return n
}

// scoreTable renders a score as the Markdown table docs/invalid-traffic.md quotes.
func scoreTable(s loadgen.Score, tally *loadgen.Tally) string {
	var b strings.Builder
	b.WriteString("| class | sent | counted as valid | verdicts |\n|---|---:|---:|---|\n")
	for _, cl := range loadgen.Classes {
		cs, ok := s.Classes[cl]
		if !ok {
			continue
		}
		var vs []string
		for r, n := range cs.Verdicts {
			vs = append(vs, fmt.Sprintf("%s %d", r, n))
		}
		sort.Strings(vs)
		name := string(cl)
		if r := tally.Retries[cl]; r > 0 {
			name += fmt.Sprintf(" (incl. %d retries)", r)
		}
		fmt.Fprintf(&b, "| %s | %d | %d (%.2f%%) | %s |\n", name, cs.Sent, cs.Valid, 100*cs.ValidShare, strings.Join(vs, ", "))
	}
	var invalid, rejected int64
	for _, cl := range loadgen.Classes {
		if cs := s.Classes[cl]; !cl.Valid() {
			invalid += cs.Sent
			rejected += cs.Sent - cs.Valid
		}
	}
	fmt.Fprintf(&b, "\ninvalid rejected %.2f%% (%d of %d); precision %.4f, recall %.4f (human first views), missing %d\n",
		100*float64(rejected)/float64(max(invalid, 1)), rejected, invalid, s.Precision, s.Recall, s.Missing)
	return b.String()
}

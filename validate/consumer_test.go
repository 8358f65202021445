package validate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	vcstream "github.com/viewcount/viewcount/internal/stream"
	"github.com/viewcount/viewcount/internal/stream/streamtest"
	"github.com/viewcount/viewcount/rollup"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
	"github.com/viewcount/viewcount/validate/judge"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

const testPartitions = 3

// testLeaseRenew lets a test's validator give its partitions up to a
// revalidation within a fraction of a second instead of the default's 5 s.
const testLeaseRenew = 200 * time.Millisecond

// trafficStart is when testTraffic begins: in the past, so held views are
// due and ticks release them.
var trafficStart = time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)

// registeredBefore is the registry's clock in tests replaying traffic from
// the past: the sites were registered an hour before it began, so their
// views belong to their registration (viewcount.InRegistration).
func registeredBefore(start time.Time) func() time.Time {
	return func() time.Time { return start.Add(-time.Hour) }
}

// testTraffic is a deterministic mix exercising every stateful rule: many
// visitors with reloads and retries, a flood, bots, an unknown site. Event
// times span 40 minutes, so windows open and close during the run.
func testTraffic(n int) []viewcount.Event {
	rng := rand.New(rand.NewPCG(7, 11))
	t := trafficStart
	uas := []string{
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36",
		"Mozilla/5.0 (X11; Linux x86_64; rv:145.0) Gecko/20100101 Firefox/145.0",
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
	}
	evs := make([]viewcount.Event, 0, n)
	for i := 0; i < n; i++ {
		t = t.Add(time.Duration(rng.IntN(2400)) * time.Millisecond)
		v := uint64(rng.IntN(250))
		site := "a.example"
		if rng.IntN(20) == 0 {
			site = "b.example"
		}
		ua := uas[rng.IntN(2)]
		if rng.IntN(12) == 0 {
			ua = uas[2]
		}
		e := viewcount.Event{Time: t, Site: site, Page: fmt.Sprintf("/p%d", rng.IntN(12)),
			UA: ua, ID: fmt.Sprintf("e%d", i), Source: viewcount.SourcePixel}
		if i%97 == 0 && i > 0 { // a retry of an earlier event
			e = evs[rng.IntN(len(evs))]
			e.Time = t
		}
		if i%300 < 40 { // a flood from one visitor
			v = 9999
			e.Page = fmt.Sprintf("/flood/%d", i)
		}
		e.Network = v / 8
		e.Visitor = viewcount.NetworkKey(v*0x9E3779B97F4A7C15, e.Network)
		evs = append(evs, e)
	}
	return evs
}

// publish writes evs to the stream as messages of one to three events of
// one partition, in order.
func publish(t *testing.T, c *vcstream.Conn, evs []viewcount.Event) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < len(evs); {
		p := viewcount.Partition(evs[i].Visitor, testPartitions)
		j := i + 1
		for j < len(evs) && j < i+3 && viewcount.Partition(evs[j].Visitor, testPartitions) == p {
			j++
		}
		if _, err := c.JS.Publish(ctx, viewcount.Subject(p), viewcount.AppendEvents(nil, evs[i:j])); err != nil {
			t.Fatal(err)
		}
		i = j
	}
}

type pipeline struct {
	conn  *vcstream.Conn
	sites *vcstream.Sites
	store store.Store
}

func newPipeline(t *testing.T, evs []viewcount.Event) *pipeline {
	t.Helper()
	ctx := context.Background()
	p := &pipeline{conn: streamtest.Open(t, testPartitions), store: storetest.Migrated(t)}
	var err error
	if p.sites, err = vcstream.OpenSites(ctx, p.conn, registeredBefore(trafficStart)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.sites.Close)
	if _, _, err := p.sites.Add(ctx, "a.example"); err != nil {
		t.Fatal(err)
	}
	publish(t, p.conn, evs)
	return p
}

func quiet() *slog.Logger {
	if os.Getenv("VC_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// verdicts reads every row of views_raw as "partition/seq/idx id verdict".
func (p *pipeline) verdicts(t *testing.T) []string {
	t.Helper()
	res, err := p.store.Query(context.Background(), queries.Text(queries.Verdicts), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(res.TextRows()))
	for i, r := range res.TextRows() {
		out[i] = strings.Join(r, " ")
	}
	return out
}

// start runs one incarnation of a validator on its own client connection,
// as a separate process would. crash cuts that connection (no final flush,
// no lease release) before stopping it; a clean stop flushes. Every
// incarnation has the same owner name, as a restarted validator with a
// stable name does, so it reclaims its partitions without waiting.
func (p *pipeline) start(t *testing.T) (stop func(crash bool)) {
	t.Helper()
	return p.startWith(t, judge.DefaultConfig())
}

// startWith is start with the rules' configuration cfg.
func (p *pipeline) startWith(t *testing.T, cfg judge.Config) (stop func(crash bool)) {
	t.Helper()
	nc, js, err := p.conn.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	intents, err := js.KeyValue(context.Background(), viewcount.BucketRollup)
	if err != nil {
		t.Fatal(err)
	}
	metrics := viewcount.NewMetrics()
	sink := rollup.NewSink(rollup.Config{MaxRows: 64, InsertRetries: 1}, p.store, intents, metrics, quiet(), time.Now)
	v, err := New(cfg, Options{FlushEvery: 20 * time.Millisecond, FetchBatch: 16, Owner: "restarting-validator", LeaseRenew: testLeaseRenew}, js, testPartitions, p.sites, SinkOf(sink.Open), metrics, quiet())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = v.Run(ctx)
	}()
	return func(crash bool) {
		if crash {
			nc.Close()
		}
		cancel()
		<-done
		nc.Close()
	}
}

func (p *pipeline) waitRows(t *testing.T, atLeast int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		n := len(p.verdicts(t))
		if n >= atLeast {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d rows inserted", n, atLeast)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRestartsGiveSameVerdicts runs validation over the same stream twice:
// once uninterrupted, once crashed (connection cut mid-batch, nothing
// flushed or acknowledged) and restarted four times, with a clean restart
// in between. Every event must get the same verdict in both, exactly once.
func TestRestartsGiveSameVerdicts(t *testing.T) {
	evs := testTraffic(3000)

	// The two runs have a stream and a store each: the uninterrupted one
	// runs while the other restarts.
	a, b := newPipeline(t, evs), newPipeline(t, evs)
	stopA := a.start(t)

	for i, crash := range []bool{true, false, true, true, true} {
		stop := b.start(t)
		b.waitRows(t, (i+1)*len(evs)/6)
		stop(crash)
	}
	stop := b.start(t)
	b.waitRows(t, len(evs))
	time.Sleep(100 * time.Millisecond) // a duplicate insert would show up by now
	stop(false)
	got := b.verdicts(t)

	a.waitRows(t, len(evs))
	stopA(false)
	want := a.verdicts(t)

	if len(got) != len(evs) || len(want) != len(evs) {
		t.Fatalf("rows: uninterrupted %d, restarted %d, events %d", len(want), len(got), len(evs))
	}
	if !slices.Equal(got, want) {
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("first difference at row %d:\n restarted     %s\n uninterrupted %s", i, got[i], want[i])
			}
		}
	}
	reasons := map[string]int{}
	for _, r := range want {
		reasons[r[strings.LastIndexByte(r, ' ')+1:]]++
	}
	for _, r := range []viewcount.Reason{viewcount.Valid, viewcount.BotUA, viewcount.UnknownSite, viewcount.DuplicateID, viewcount.Duplicate, viewcount.Rate} {
		if reasons[string(r)] == 0 {
			t.Errorf("the traffic produced no %s verdict (%v): the test would not notice a change there", r, reasons)
		}
	}
	t.Logf("verdicts: %v", reasons)
}

// TestLeaseExclusive: a partition has one owner at a time; another waits
// until the lease is released (or expires), the same owner reclaims at once.
func TestLeaseExclusive(t *testing.T) {
	c := streamtest.Open(t, 1)
	ctx := context.Background()
	kv, err := c.JS.KeyValue(ctx, viewcount.BucketLeases)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := acquireLease(ctx, kv, 0, "a", time.Minute, quiet()); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	_, err = acquireLease(short, kv, 0, "b", time.Minute, quiet())
	cancel()
	if err == nil {
		t.Fatal("b acquired a partition a holds")
	}
	a, err := acquireLease(ctx, kv, 0, "a", time.Minute, quiet())
	if err != nil {
		t.Fatalf("a could not reclaim its own lease: %v", err)
	}
	a.release()
	short, cancel = context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := acquireLease(short, kv, 0, "b", time.Minute, quiet()); err != nil {
		t.Fatalf("b after release: %v", err)
	}
	// a's renewal now fails: its lease is lost.
	if err := a.keepOnce(ctx); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("renewing a taken lease: %v, want ErrLeaseLost", err)
	}
}

// TestNewSplitsBudgets: left to their defaults, the duplicate windows and
// the settle hold get the process budgets split among the partitions this
// validator owns; a value set by the caller is kept.
func TestNewSplitsBudgets(t *testing.T) {
	for _, c := range []struct {
		cfg               judge.Config
		owned             []int
		wantKeys, wantMax int
	}{
		{judge.Config{}, nil, 1 << 20, 1 << 17},           // all 4 of 4
		{judge.Config{}, []int{2}, 1 << 22, 1 << 19},      // 1 of 4: the whole budget
		{judge.Config{}, []int{0, 3}, 1 << 21, 1 << 18},   // 2 of 4
		{judge.Config{MaxKeys: 3, MaxHeld: 5}, nil, 3, 5}, // set by the caller
	} {
		v, err := New(c.cfg, Options{Partitions: c.owned}, nil, 4, sitesOf{}, nil, viewcount.NewMetrics(), quiet())
		if err != nil {
			t.Fatal(err)
		}
		if v.cfg.MaxKeys != c.wantKeys || v.cfg.MaxHeld != c.wantMax {
			t.Errorf("owning %v: MaxKeys %d, MaxHeld %d; want %d, %d", c.owned, v.cfg.MaxKeys, v.cfg.MaxHeld, c.wantKeys, c.wantMax)
		}
	}
}

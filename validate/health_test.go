package validate

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/rollup"
	"github.com/viewcount/viewcount/validate/judge"
)

// run starts a validator over p with opts (FlushEvery, FetchBatch and Owner
// filled in) and the given sink config; stop (idempotent) stops it, and
// runs at cleanup.
func (p *pipeline) run(t *testing.T, opts Options, scfg rollup.Config) (metrics *viewcount.Metrics, stop func()) {
	t.Helper()
	intents, err := p.conn.JS.KeyValue(context.Background(), viewcount.BucketRollup)
	if err != nil {
		t.Fatal(err)
	}
	metrics = viewcount.NewMetrics()
	sink := rollup.NewSink(scfg, p.store, intents, metrics, quiet(), time.Now)
	opts.FlushEvery, opts.FetchBatch, opts.Owner, opts.LeaseRenew = 20*time.Millisecond, 16, "health-test", testLeaseRenew
	v, err := New(judge.DefaultConfig(), opts, p.conn.JS, testPartitions, p.sites, SinkOf(sink.Open), metrics, quiet())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = v.Run(ctx)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	t.Cleanup(stop)
	return metrics, stop
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPartitionHealthRecovers: the store fails past the insert retries
// (views_raw detached), so every partition stops and restarts; health shows
// each partition and the lag failing with the reason. Once the store works
// again the partitions recover by themselves, no restart of the validator,
// health clears, and every event is in views_raw exactly once.
func TestPartitionHealthRecovers(t *testing.T) {
	evs := testTraffic(600)
	p := newPipeline(t, evs)
	ctx := context.Background()
	// Test-only SQL: a real store fault, undone below.
	if err := p.store.Exec(ctx, "DETACH TABLE views_raw", nil); err != nil {
		t.Fatal(err)
	}
	metrics, _ := p.run(t, Options{MaxLag: time.Hour}, rollup.Config{MaxRows: 64, InsertRetries: 2, RetryBackoff: time.Millisecond})

	failing := func() bool {
		f := metrics.Failing()
		for q := 0; q < testPartitions; q++ {
			if !strings.Contains(f[partName(q)], "insert batch") {
				return false
			}
		}
		// The traffic is dated months ago: the lag bound of 1h is passed.
		return strings.Contains(f["lag"], "oldest event not yet counted")
	}
	waitFor(t, "every partition and the lag failing", 30*time.Second, failing)
	t.Logf("failing: %v", metrics.Failing())

	if err := p.store.Exec(ctx, "ATTACH TABLE views_raw", nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "health to clear", 60*time.Second, func() bool {
		parts := metrics.HealthParts()
		return len(parts) == testPartitions+1 && len(metrics.Failing()) == 0
	})
	rows := p.verdicts(t)
	seen := map[string]bool{}
	for _, r := range rows {
		key := strings.Join(strings.Fields(r)[:3], "/")
		if seen[key] {
			t.Fatalf("%s is in views_raw twice", key)
		}
		seen[key] = true
	}
	if len(rows) != len(evs) {
		t.Fatalf("views_raw has %d rows, want %d", len(rows), len(evs))
	}
}

// TestLagBoundStartsAfterSettling: a view settling held for the settle
// window reaches the writer that old by design; the lag part fails only for
// what is older than the bound beyond it.
func TestLagBoundStartsAfterSettling(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	cfg := judge.DefaultConfig()
	cfg.SettleWindow = 2 * time.Minute
	v := &Validator{cfg: cfg, opts: Options{MaxLag: time.Minute, Now: func() time.Time { return now }}, metrics: viewcount.NewMetrics()}
	pp := &partProgress{}
	f := func(age time.Duration, failing bool) {
		t.Helper()
		pp.advanced(now, false, now.Add(-age), false, false)
		v.reportHealth(map[int]*partProgress{0: pp})
		if _, got := v.metrics.Failing()["lag"]; got != failing {
			t.Errorf("oldest %s old: lag failing = %v, want %v (%v)", age, got, failing, v.metrics.Failing())
		}
	}
	f(2*time.Minute+time.Second, false) // a held view just released
	f(2*time.Minute+59*time.Second, false)
	f(3*time.Minute+time.Second, true)
	cfg.SettleWindow = -1 // settling off: the bound is --ready-max-lag alone
	v.cfg = cfg
	f(61*time.Second, true)
}

// TestPipelineLagGauge: the pipeline lag gauge is the age of the oldest
// event the partitions read and have not counted yet, views held for
// settling included, and 0 once nothing waits: never the last feed's
// figure kept at rest (Grafana's validator lag panel read 124.9 s on an
// idle server).
func TestPipelineLagGauge(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	v := &Validator{cfg: judge.DefaultConfig(), opts: Options{MaxLag: time.Minute, Now: func() time.Time { return now }}, metrics: viewcount.NewMetrics()}
	a, b := &partProgress{}, &partProgress{}
	parts := map[int]*partProgress{0: a, 1: b}
	f := func(want time.Duration) {
		t.Helper()
		v.reportHealth(parts)
		if got := v.metrics.PipelineLag(); got != want {
			t.Errorf("gauge %v, want %v", got, want)
		}
	}
	f(0) // nothing read
	a.advanced(now, false, now.Add(-3*time.Second), true, false)
	f(3 * time.Second) // a batch not inserted or not fed yet
	b.setHeld(map[viewcount.PendingKey]uint64{{Site: "s.example"}: 1}, map[string]time.Time{"s.example": now.Add(-90 * time.Second)})
	f(90 * time.Second) // held for settling
	b.setHeld(nil, nil)
	f(3 * time.Second)
	a.caughtUp(now, now.Add(-time.Second)) // inserted, the feed to come
	f(time.Second)
	a.caughtUp(now, time.Time{})
	f(0) // at rest
}

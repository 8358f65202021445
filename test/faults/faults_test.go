//go:build faults

package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The suite is configured from the environment (the Makefile sets it):
// VIEWCOUNT_FAULTS_SEED makes a run's fault schedule and load repeat,
// VIEWCOUNT_FAULTS=soak runs the long variant, VIEWCOUNT_FAULTS_ONLY
// (comma-separated scenario names) runs a subset.
func TestFaults(t *testing.T) {
	seed := time.Now().UnixNano() & (1<<53 - 1)
	if s := os.Getenv("VIEWCOUNT_FAULTS_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseInt(s, 10, 64); err != nil {
			t.Fatalf("VIEWCOUNT_FAULTS_SEED=%q: %v", s, err)
		}
	}
	soak := os.Getenv("VIEWCOUNT_FAULTS") == "soak"
	mode := "short"
	if soak {
		mode = "soak"
	}
	only := map[string]bool{}
	for _, n := range strings.Split(os.Getenv("VIEWCOUNT_FAULTS_ONLY"), ",") {
		if n = strings.TrimSpace(n); n != "" {
			only[n] = true
		}
	}
	t.Logf("seed=%d mode=%s (repeat with VIEWCOUNT_FAULTS_SEED=%d)", seed, mode, seed)
	viewcountBin(t) // built once, before any scenario's clock starts

	began := time.Now()
	var lines []string
	for i, sc := range scenarios(soak) {
		if len(only) > 0 && !only[sc.name] {
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			reported := false
			defer func() { // also after a t.Fatal or a t.Skip
				if !reported {
					lines = append(lines, fmt.Sprintf("scenario=%s aborted (see its log above)", sc.name))
				}
			}()
			runScenario(t, sc, seed, i, soak, func(line string) { lines = append(lines, line); reported = true })
		})
	}
	t.Logf("summary (seed=%d mode=%s, %s in all):\n%s", seed, mode, time.Since(began).Round(time.Second), strings.Join(lines, "\n"))
}

// scenario is one fault and how the process should come out of it.
type scenario struct {
	name      string
	transient bool   // the process must heal without a restart
	tmpfs     string // size of a tmpfs the data dir lives on; "" = none
	nofile    int    // descriptor limit of the child; 0 = inherited
	nats      bool   // an external nats-server (NATS_URL) instead of the embedded one
	mustServe bool   // the load must still be acknowledged while the fault is held
	degrades  bool   // /readyz must answer 503 at some point while the fault lasts
	inject    func(e *env)
}

// env is what a scenario's fault acts on.
type env struct {
	t       *testing.T
	rng     *rand.Rand
	c       *child
	nats    *natsServer
	load    *load
	data    string
	soak    bool
	startup time.Duration // how long the child took from exec to ready
	held    int           // acknowledgements while a flood was held; -1 = not measured
}

// hold keeps a fault in place for d and counts what the load got
// acknowledged meanwhile.
func (e *env) hold(d time.Duration) {
	before := e.load.ackedCount()
	time.Sleep(d)
	e.held = e.load.ackedCount() - before
}

func pick(soak bool, short, long time.Duration) time.Duration {
	if soak {
		return long
	}
	return short
}

func scenarios(soak bool) []scenario {
	ss := []scenario{
		{name: "kill9", inject: killAtRandom},
		{name: "store-1s", transient: true, inject: storeDown(time.Second)},
		{name: "store-10s", transient: true, degrades: true, inject: storeDown(10 * time.Second)},
	}
	if soak {
		ss = append(ss, scenario{name: "store-2m", transient: true, degrades: true, inject: storeDown(2 * time.Minute)})
	}
	return append(ss,
		scenario{name: "full-disk", transient: true, degrades: true, tmpfs: "512m", inject: fullDisk},
		// One client's connections must not take the descriptors everyone
		// else, the stream and the store need: under a 4096 limit, both
		// floods are large enough to exhaust it without a connection cap.
		scenario{name: "fd-exhaustion", transient: true, nofile: 4096, mustServe: true, inject: exhaustDescriptors},
		scenario{name: "nats-stall", transient: true, degrades: true, nats: true, inject: stallNATS},
		scenario{name: "conn-flood", transient: true, nofile: 4096, mustServe: true, inject: connFlood},
	)
}

func runScenario(t *testing.T, sc scenario, seed int64, i int, soak bool, report func(string)) {
	began := time.Now()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if sc.tmpfs != "" {
		if reason := mountTmpfs(t, data, sc.tmpfs); reason != "" {
			line := fmt.Sprintf("scenario=%s skipped: %s", sc.name, reason)
			report(line)
			t.Skip(reason)
		}
	}
	e := &env{t: t, rng: rand.New(rand.NewPCG(uint64(seed), uint64(i))), data: data, soak: soak, held: -1}
	e.c = newChild(t, data, dir)
	e.c.nofile = sc.nofile
	if sc.nats {
		if err := os.MkdirAll(filepath.Join(dir, "nats"), 0o750); err != nil {
			t.Fatal(err)
		}
		e.nats = startNATS(t, filepath.Join(dir, "nats"))
		e.c.natsURL = e.nats.url()
	}
	t0 := time.Now()
	e.c.start()
	e.c.ready(2 * time.Minute)
	e.startup = time.Since(t0)
	site := "faults-" + sc.name + ".example"
	if err := addSite(e.c.base(), site); err != nil {
		t.Fatal(err)
	}

	visitors, rate := 3000, 40.0
	if soak {
		visitors, rate = 6000, 80
	}
	l := startLoad(e.c.base(), loadConfig{site: site, visitors: visitors, workers: 8, rate: rate,
		prefix: fmt.Sprintf("%s.%d", sc.name, seed)}, rand.New(rand.NewPCG(uint64(seed), uint64(i)+1000)))
	e.load = l
	defer func() { // on a t.Fatal the load must not outlive the child
		select {
		case <-l.stop:
		default:
			l.finish(0)
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for l.ackedCount() < 100 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}

	// The fault, watched: whether /readyz said so while it lasted, and how
	// many acknowledgements the load still got.
	ackedBefore := l.ackedCount()
	startsBefore := e.c.starts
	var degraded atomic.Bool
	watchCtx, stopWatch := context.WithCancel(context.Background())
	go watchReady(watchCtx, e.c, &degraded)
	faultBegan := time.Now()
	sc.inject(e)
	faultTook := time.Since(faultBegan)
	stopWatch()
	servedDuring := l.ackedCount() - ackedBefore

	time.Sleep(3 * time.Second) // load goes on over the recovery
	l.finish(time.Minute)

	// Recovered without a restart: the same process acknowledged every
	// request within a minute of the fault's end and counted every acknowledged
	// id. If it did not, it is restarted, the unacknowledged requests are
	// sent again, and counting is given another chance, so the store check
	// below tells a lost view from a stuck process.
	recovered := "n/a"
	wait := 90 * time.Second
	if sc.transient {
		recovered, wait = "no", time.Minute
	}
	n, ok := waitCounted(e.c, site, l.ackedCount(), wait, 0)
	switch {
	case ok && l.gaveUpCount() == 0:
		if sc.transient && e.c.starts == startsBefore {
			recovered = "yes"
		}
	default:
		t.Logf("counted %d of %d acknowledged, %d ids unacknowledged: restarting viewcount on the same data dir", n, l.ackedCount(), l.gaveUpCount())
		e.c.restart()
		l.resend(time.Minute)
		if n, ok = waitCounted(e.c, site, l.ackedCount(), 90*time.Second, 20*time.Second); !ok {
			t.Logf("after the restart still %d of %d acknowledged counted (no progress for 20s)", n, l.ackedCount())
		}
	}
	errLines := e.c.errorLines(5)
	stoppedCleanly := e.c.stop(time.Minute)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	checkProblems, err := operatorCheck(ctx, e.c)
	if err != nil {
		t.Fatalf("viewcount check: %v", err)
	}
	o, err := inspect(ctx, data, site, l)
	if err != nil {
		t.Fatalf("inspect the store: %v", err)
	}
	line := fmt.Sprintf("scenario=%s acknowledged=%d counted=%d missing=%d duplicates=%d reports=%d reports_missing=%d reports_refused=%d recovered_without_restart=%s rollup_mismatches=%d unexpected=%d readyz_degraded=%s acked_during_fault=%d acked_while_held=%d fault=%s retries=%d took=%s",
		sc.name, o.acknowledged, o.counted, o.missing, o.duplicates, o.reports, o.reportsMissing, len(o.reportsRefused), recovered, len(o.rollupDiffs), o.unexpected,
		yesNo(degraded.Load()), servedDuring, e.held, faultTook.Round(100*time.Millisecond), l.retries.Load(), time.Since(began).Round(time.Second))
	t.Log(line)
	report(line)
	t.Logf("verdicts: %v; child starts: %d", o.verdicts, e.c.starts)

	var problems []string
	if !o.ok() {
		problems = append(problems, fmt.Sprintf("store differs from the acknowledged ids (missing %d, duplicates %d, unexpected %d; reports missing %d, refused %v) or the rollups from a recount (%d rows, first: %v)",
			o.missing, o.duplicates, o.unexpected, o.reportsMissing, o.reportsRefused, len(o.rollupDiffs), first(o.rollupDiffs)))
	}
	if len(checkProblems) > 0 {
		problems = append(problems, fmt.Sprintf("viewcount check found %d problem(s), first: %s", len(checkProblems), checkProblems[0]))
	}
	if sc.degrades && !degraded.Load() {
		problems = append(problems, "/readyz answered 200 throughout the fault")
	}
	if sc.mustServe && e.held == 0 {
		problems = append(problems, "the load got no acknowledgement while the fault was held")
	}
	if recovered == "no" {
		problems = append(problems, "the process did not recover from a transient fault without a restart")
	}
	if len(l.refused) > 0 || len(l.gaveUp) > 0 {
		problems = append(problems, fmt.Sprintf("load: %d requests refused (first %v), %d ids never acknowledged", len(l.refused), first(l.refused), len(l.gaveUp)))
	}
	if !stoppedCleanly {
		problems = append(problems, "viewcount did not stop within a minute of SIGTERM")
	}
	if len(problems) > 0 {
		t.Errorf("scenario %s:\n  %s\nfirst error lines of viewcount:\n  %s\nlog tail:\n%s", sc.name,
			strings.Join(problems, "\n  "), strings.Join(errLines, "\n  "), e.c.logTail(25))
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// watchReady notes whether /readyz answered anything but 200 while ctx
// lasts (a refused connection, as when the process is down, is no answer).
func watchReady(ctx context.Context, c *child, degraded *atomic.Bool) {
	hc := &http.Client{Timeout: 3 * time.Second}
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, "GET", c.base()+"/readyz", nil)
		if resp, err := hc.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				degraded.Store(true)
			}
		}
		sleepCtx(ctx, 500*time.Millisecond)
	}
}

func addSite(base, domain string) error {
	req, _ := http.NewRequest("POST", base+"/v1/admin/sites", strings.NewReader(`{"domain":"`+domain+`"}`))
	req.Header.Set("Authorization", "Bearer "+adminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("add site: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("add site %s: %d", domain, resp.StatusCode)
	}
	return nil
}

// mountTmpfs puts dir on a tmpfs of the given size, unmounted at cleanup
// (after the child is killed: cleanups run last-registered first). It
// returns why it cannot, for a skip.
func mountTmpfs(t *testing.T, dir, size string) string {
	if os.Geteuid() != 0 {
		return "mounting a tmpfs needs root"
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		return fmt.Sprintf("mount -t tmpfs: %v: %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Logf("umount %s: %v: %s; detaching it", dir, err, out)
			_ = exec.Command("umount", "-l", dir).Run()
		}
	})
	return ""
}

//go:build faults

package faults

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/viewcount/viewcount/sql/store"
)

// killAtRandom kills the child with SIGKILL at seeded random moments under
// load, half of the time again during the restart's startup (while the
// validator replays the stream), and restarts it on the same data dir.
func killAtRandom(e *env) {
	kills := 4
	if e.soak {
		kills = 20
	}
	for k := range kills {
		time.Sleep(2*time.Second + time.Duration(e.rng.Int64N(int64(6*time.Second))))
		e.c.kill9()
		time.Sleep(time.Duration(e.rng.Int64N(int64(time.Second))))
		e.c.start()
		if e.rng.IntN(2) == 0 {
			// The validators rebuild their state from the stream just after
			// the process serves, so up to three first-start times covers
			// both opening the stores and the replay.
			at := time.Duration(e.rng.Int64N(int64(3 * e.startup)))
			time.Sleep(at)
			e.t.Logf("kill %d: again %s into the restart", k+1, at.Round(time.Millisecond))
			e.c.kill9()
			e.c.start()
		}
		e.c.ready(2 * time.Minute)
	}
}

// storeDown fails every store call for d through the fault hook.
func storeDown(d time.Duration) func(e *env) {
	return func(e *env) {
		time.Sleep(time.Duration(e.rng.Int64N(int64(2 * time.Second))))
		e.c.setFault(store.FaultStoreDown, true)
		time.Sleep(d)
		e.c.setFault(store.FaultStoreDown, false)
	}
}

// fullDisk fills the data dir's tmpfs with a file, holds it full under
// load, then removes the file.
func fullDisk(e *env) {
	fill := filepath.Join(e.data, "faults-fill")
	f, err := os.Create(fill)
	if err != nil {
		e.t.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	var n int64
	for {
		w, err := f.Write(buf)
		n += int64(w)
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
		if err != nil {
			f.Close()
			e.t.Fatalf("fill the disk: %v", err)
		}
	}
	f.Close()
	e.t.Logf("disk full (%d MiB written)", n>>20)
	time.Sleep(pick(e.soak, 10*time.Second, time.Minute))
	if err := os.Remove(fill); err != nil {
		e.t.Fatal(err)
	}
}

// exhaustDescriptors opens idle keep-alive connections from one address
// until the child (under a 4096 descriptor limit) takes no more, holds
// them under load, then closes them.
func exhaustDescriptors(e *env) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conns, failed := keepAlive(ctx, exhaustFrom, "127.0.0.1:"+strconv.Itoa(e.c.port), 2*e.c.nofile)
	e.t.Logf("%d idle keep-alive connections open from %s (%d attempts failed)", len(conns), exhaustFrom, failed)
	e.hold(pick(e.soak, 10*time.Second, time.Minute))
	for _, c := range conns {
		c.Close()
	}
}

// stallNATS freezes the external nats-server (SIGSTOP … SIGCONT), then
// stops it and starts it again on the same store directory.
func stallNATS(e *env) {
	time.Sleep(2 * time.Second)
	e.nats.signal(syscall.SIGSTOP)
	time.Sleep(pick(e.soak, 5*time.Second, 30*time.Second))
	e.nats.signal(syscall.SIGCONT)
	time.Sleep(5 * time.Second)
	sig := syscall.SIGTERM
	if e.soak && e.rng.IntN(2) == 0 {
		sig = syscall.SIGKILL
	}
	e.nats.signal(sig)
	if !e.nats.wait(30 * time.Second) {
		e.t.Logf("nats-server did not stop within 30s of %v: killed", sig)
		e.nats.signal(syscall.SIGKILL)
		e.nats.wait(10 * time.Second)
	}
	time.Sleep(pick(e.soak, 5*time.Second, 30*time.Second))
	e.nats.start()
}

// connFlood holds idle and slow (headers trickled) connections open from
// one address while the load runs: 5000 in all, more than the child's
// 4096 descriptors. The load is measured after a few seconds, once the
// flood has opened what it can.
func connFlood(e *env) {
	ctx, cancel := context.WithTimeout(context.Background(), pick(e.soak, 20*time.Second, 2*time.Minute))
	defer cancel()
	done := make(chan int)
	go func() { done <- flood(ctx, floodFrom, "127.0.0.1:"+strconv.Itoa(e.c.port), 3000, 2000) }()
	time.Sleep(5 * time.Second)
	e.hold(pick(e.soak, 15*time.Second, 115*time.Second) - 500*time.Millisecond)
	e.t.Logf("flood from %s: %d connections opened", floodFrom, <-done)
}

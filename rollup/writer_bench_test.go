package rollup_test

import (
	"context"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/stream/streamtest"
	"github.com/viewcount/viewcount/rollup"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// BenchmarkWriterFed is the store's end-to-end path as one partition's
// validator drives it, the embedded default: a Writer taking stream
// messages of three verdicts (store's BenchmarkInsertFed/spread rows) with
// its default batching and feed (50k-row inserts in the background while
// the next batch fills, a feed every 200k rows or 3 s on its own
// goroutine, each batch's intent recorded in a real JetStream bucket),
// then Drain. BenchmarkInsertFed runs the same inserts and feeds one after
// another; here they overlap as they do in `viewcount serve`. rows/s is
// end to end, every row in the rollups; cpu-ns/row the whole process's
// CPU, merges and the NATS server included. b.N batches of 50k rows.
//
//	go test -run '^$' -bench BenchmarkWriterFed -benchtime 40x ./rollup/
func BenchmarkWriterFed(b *testing.B) {
	for _, visits := range []bool{false, true} {
		name := "spread/batch=50000/feed=200000"
		if visits {
			name = "spread/visits/batch=50000/feed=200000"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			conn := streamtest.Open(b, 1)
			intents, err := conn.KV(ctx, viewcount.BucketRollup)
			if err != nil {
				b.Fatal(err)
			}
			st := storetest.Migrated(b)
			rows := storetest.LoadRows(50_000, 100_000, time.Now().UTC().Add(-time.Hour))
			if visits {
				storetest.WithVisits(rows)
			}
			const perMsg = 3 // LoadRows' rows per stream message
			for i := range rows {
				rows[i].Partition = 0
			}
			w, err := rollup.NewSink(rollup.Config{}, st, intents, viewcount.NewMetrics(), discard(), time.Now).Open(ctx, 0)
			if err != nil {
				b.Fatal(err)
			}
			cpu0, start := storetest.ProcessCPU(b), time.Now()
			seq := uint64(0)
			n := 0
			for b.Loop() {
				n++
				buf := rows // Add copies what it is handed
				for i := 0; i < len(buf); i += perMsg {
					seq++
					msg := buf[i:min(i+perMsg, len(buf))]
					for j := range msg {
						msg[j].Seq, msg[j].Index = seq, uint32(j)
					}
					if err := w.Add(ctx, seq, msg); err != nil {
						b.Fatal(err)
					}
				}
			}
			if err := w.Drain(ctx); err != nil {
				b.Fatal(err)
			}
			// b.Loop stops the timer when it ends; the last batches' feed is
			// part of the path, so the wall time is taken by hand.
			cpu, wall := storetest.ProcessCPU(b)-cpu0, time.Since(start)
			total := n * len(rows)
			b.ReportMetric(float64(total)/wall.Seconds(), "rows/s")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(total), "cpu-ns/row")

			// Every valid view is counted once the Writer has drained.
			want := uint64(0)
			for _, r := range rows {
				if r.Reason == viewcount.Valid && r.Kind != viewcount.KindEngagement {
					want++
				}
			}
			want *= uint64(n)
			res, err := st.Query(ctx, "SELECT toUInt64(sum(views)) AS views FROM page_rollup WHERE site = 'load.example' AND grain = 'day'", nil)
			if err != nil || !res.Next() {
				b.Fatalf("read the rollup: %v", err)
			}
			if got := res.Uint64("views"); got != want {
				b.Fatalf("page_rollup counts %d views, want %d", got, want)
			}
		})
	}
}

package store_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/feed"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// BenchmarkInsertFed is BenchmarkInsertBatch plus the rollup feed, as a
// busy partition runs them: 50k-row batches into views_raw, and every
// fourth batch a feed of the last 200k rows into the rollups (the
// Writer's FeedConfig.Rows). rows/s is what the store sustains end to end,
// counts included; cpu-ns/row is the machine's cost of both. visits is
// the same with a third of the rows engagement reports and the visit
// stage's delta on every valid row (withVisits), which engagement_rollup's
// view sums.
//
//	go test -run '^$' -bench BenchmarkInsertFed -benchtime 40x ./sql/store/
func BenchmarkInsertFed(b *testing.B) {
	for _, c := range []struct {
		name   string
		pages  uint64
		visits bool
	}{{"spread", 100_000, false}, {"hot", 1, false}, {"spread/visits", 100_000, true}, {"hot/visits", 1, true}} {
		b.Run(c.name+"/batch=50000/feed=200000", func(b *testing.B) {
			rows := storetest.LoadRows(50_000, c.pages, time.Now().UTC().Add(-time.Hour))
			if c.visits {
				storetest.WithVisits(rows)
			}
			fedLoop(b, migrated(b, openTestStore), rows, 4)
		})
	}
}

// fedLoop inserts rows as one numbered batch per iteration (each with its
// own token) and feeds every batches of them to the rollups; every 0
// never feeds (the insert path alone). It reports rows/s and the CPU per
// row, per insert and per feed: the whole process's, chDB's threads and
// background merges included, what the path costs the machine, not just
// the caller's wait.
func fedLoop(b *testing.B, s store.Store, rows []viewcount.Verdict, every int) {
	start := rows[0].Time
	for i := range rows {
		if rows[i].Time.Before(start) {
			start = rows[i].Time
		}
	}
	seqs := newStreamSeqs(rows)
	n, feeds, fed := 0, 0, uint64(0)
	var feedCPU time.Duration
	cpu0 := storetest.ProcessCPU(b)
	for b.Loop() {
		n++
		seqs.batch(rows, n)
		if err := s.InsertViews(b.Context(), "bench:"+strconv.Itoa(n), rows); err != nil {
			b.Fatal(err)
		}
		if every > 0 && n%every == 0 {
			c := storetest.ProcessCPU(b)
			if err := feed.Run(b.Context(), s, int(rows[0].Partition), fed+1, uint64(n), start); err != nil {
				b.Fatal(err)
			}
			feedCPU += storetest.ProcessCPU(b) - c
			fed, feeds = uint64(n), feeds+1
		}
	}
	cpu := storetest.ProcessCPU(b) - cpu0
	b.ReportMetric(float64(n*len(rows))/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(n*len(rows)), "cpu-ns/row")
	b.ReportMetric(float64((cpu-feedCPU).Microseconds())/float64(n), "cpu-us/insert")
	if feeds > 0 {
		b.ReportMetric(float64(feedCPU.Microseconds())/float64(feeds), "cpu-us/feed")
	}
}

// streamSeqs numbers a benchmark's batches as a stream does: batch n
// (from 1) holds the stream sequences after batch n-1's. The feed reads
// its rows back in stream order (seq, idx), so batches repeating each
// other's sequences would interleave their parts row by row in the feed's
// sort, which a real feed never does.
type streamSeqs struct {
	orig []uint64 // the rows' own sequences, batch 1's
	span uint64   // how many sequences a batch spans
}

func newStreamSeqs(rows []viewcount.Verdict) streamSeqs {
	s := streamSeqs{orig: make([]uint64, len(rows))}
	lo, hi := rows[0].Seq, rows[0].Seq
	for i, r := range rows {
		s.orig[i] = r.Seq
		lo, hi = min(lo, r.Seq), max(hi, r.Seq)
	}
	s.span = hi - lo + 1
	return s
}

// batch makes rows batch n.
func (s streamSeqs) batch(rows []viewcount.Verdict, n int) {
	for i := range rows {
		rows[i].Batch = uint64(n)
		rows[i].Seq = s.orig[i] + uint64(n-1)*s.span
	}
}

package store_test

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/feed"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// BenchmarkInsertFedPartitions is BenchmarkInsertFed/spread as a validator
// with several partitions runs it: each partition inserts its 50k-row
// batches and feeds every fourth, as one goroutine each, all at once on
// one store. A partition's own path is sequential (an insert, then the
// next; a feed waits for its rows), so BenchmarkInsertFed measures one
// partition's rate; here the partitions overlap as they do in a process,
// the inserts on the store's insert connection, the feeds on its query
// connections, and rows/s is what the machine sustains end to end (the
// issue-25 target for the rollup path). partitions=1 is the sequential
// case again, for the ratio in one run. b.N batches per partition.
//
//	go test -run '^$' -bench BenchmarkInsertFedPartitions -benchtime 20x ./sql/store/
func BenchmarkInsertFedPartitions(b *testing.B) {
	for _, parts := range []int{1, 2, 4} {
		b.Run("spread/batch=50000/feed=200000/partitions="+strconv.Itoa(parts), func(b *testing.B) {
			base := storetest.LoadRows(50_000, 100_000, time.Now().UTC().Add(-time.Hour))
			start := base[0].Time
			for i := range base {
				if base[i].Time.Before(start) {
					start = base[i].Time
				}
			}
			s := migrated(b, openTestStore)
			sets := make([][]viewcount.Verdict, parts)
			for p := range sets {
				sets[p] = slices.Clone(base)
				for i := range sets[p] {
					sets[p][i].Partition = uint16(p + 1)
				}
			}
			cpu0 := storetest.ProcessCPU(b)
			b.ResetTimer()
			var g errgroup.Group
			for p, rows := range sets {
				g.Go(func() error {
					fed, seqs := uint64(0), newStreamSeqs(rows)
					for n := 1; n <= b.N; n++ {
						seqs.batch(rows, n)
						token := "bench:" + strconv.Itoa(p) + ":" + strconv.Itoa(n)
						if err := s.InsertViews(b.Context(), token, rows); err != nil {
							return err
						}
						if n%4 == 0 {
							if err := feed.Run(b.Context(), s, p+1, fed+1, uint64(n), start); err != nil {
								return err
							}
							fed = uint64(n)
						}
					}
					return nil
				})
			}
			if err := g.Wait(); err != nil {
				b.Fatal(err)
			}
			total := b.N * parts * len(base)
			b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64((storetest.ProcessCPU(b)-cpu0).Nanoseconds())/float64(total), "cpu-ns/row")
		})
	}
}

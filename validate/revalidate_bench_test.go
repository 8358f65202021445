package validate

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	vcstream "github.com/viewcount/viewcount/internal/stream"
	"github.com/viewcount/viewcount/internal/stream/streamtest"
	"github.com/viewcount/viewcount/rollup/repair"
	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/store/storetest"
	"github.com/viewcount/viewcount/validate/judge"
)

// BenchmarkRevalidate revalidates one site's last day, then its last week,
// on a generated history (VIEWCOUNT_REVAL_EVENTS events over 30 days, two
// sites; default 1M) read from views_raw (the stream holds nothing): how
// long a revalidation holds the validators, and which step takes it.
func BenchmarkRevalidate(b *testing.B) {
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("VIEWCOUNT_REVAL_EVENTS")); err == nil && v > 0 {
		n = v
	}
	ctx := context.Background()
	st := storetest.Open(b)
	if err := migrations.Apply(ctx, st, quiet()); err != nil {
		b.Fatal(err)
	}
	end := time.Now().UTC().Truncate(24 * time.Hour)
	cfg := storetest.HistoryConfig{Events: n, Days: 30, End: end, Sites: []string{"a.example", "b.example"}}
	if _, err := storetest.History(ctx, st, cfg); err != nil {
		b.Fatal(err)
	}
	conn := streamtest.Open(b, 1)
	sites, err := vcstream.OpenSites(ctx, conn, registeredBefore(end.AddDate(0, 0, -cfg.Days)))
	if err != nil {
		b.Fatal(err)
	}
	defer sites.Close()
	for _, s := range cfg.Sites {
		if _, _, err := sites.Add(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
	r, err := NewRevalidator(judge.DefaultConfig(), Revalidator{JS: conn.JS, Partitions: 1, Sites: sites, Store: st, Rollups: repair.NewRebuilder(st, quiet()), Owner: "bench", Logger: quiet()})
	if err != nil {
		b.Fatal(err)
	}
	// For comparison: the whole rebuild `repair rollups` does.
	b.Run("full-rebuild", func(b *testing.B) {
		for range b.N {
			if err := repair.Rebuild(ctx, st, repair.RebuildOptions{}, quiet()); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, days := range []int{1, 7} {
		b.Run(strconv.Itoa(days)+"d", func(b *testing.B) {
			for range b.N {
				last := time.Now()
				steps := map[string]time.Duration{}
				res, err := r.Run(ctx, viewcount.RevalidateRequest{Site: "a.example", From: end.AddDate(0, 0, -days), To: end}, func(p string) {
					step := p
					if i := len(p); i > 14 {
						step = p[:14]
					}
					steps[step] += time.Since(last)
					last = time.Now()
				})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(res.Judged), "judged")
				b.ReportMetric(float64(res.Changed), "changed")
				b.Logf("%d events judged, %d changed; time to each step: %v", res.Judged, res.Changed, steps)
			}
		})
	}
}

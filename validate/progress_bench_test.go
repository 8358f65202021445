package validate

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// BenchmarkRawMaxSeq: the progress check every partition start runs, on 5M
// rows of one partition merged into one part. "whole" is what a repair
// asks (above 0); "above_record" what a start asks (above a record 1,000
// sequences before the end), which the seq minmax index lets pass over
// the rest of the part.
func BenchmarkRawMaxSeq(b *testing.B) {
	s := storetest.Open(b)
	ctx := context.Background()
	if err := migrations.Apply(ctx, s, quiet()); err != nil {
		b.Fatal(err)
	}
	const batches, per = 50, 100000
	start := time.Now().Add(-60 * 24 * time.Hour)
	rows := make([]viewcount.Verdict, per)
	seq := uint64(0)
	for n := range batches {
		for i := range rows {
			seq++
			rows[i] = viewcount.Verdict{Event: viewcount.Event{Time: start.Add(time.Duration(seq) * time.Second),
				Site: fmt.Sprintf("s%d.example", seq%20), Page: "/p", ID: fmt.Sprint(seq)}, Reason: viewcount.Valid, Seq: seq}
		}
		if err := s.InsertViews(ctx, fmt.Sprintf("bench-%d", n), rows); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Exec(ctx, "OPTIMIZE TABLE views_raw FINAL", nil); err != nil { // test-only SQL
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name  string
		after uint64
	}{{"whole", 0}, {"above_record", seq - 1000}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				got, err := RawMaxSeq(ctx, s, 0, bc.after)
				if err != nil || got != seq {
					b.Fatalf("max seq = %d, %v; want %d", got, err, seq)
				}
			}
		})
	}
}

package validate

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/feed"
	"github.com/viewcount/viewcount/internal/stream/streamtest"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// TestPendingOldestPerSite: how far a site's counting is behind is the age
// of its own oldest event not counted yet, and a site with nothing waiting
// is not behind at all (the dashboard showed the process's last feed for
// every site, 124.9 s at rest on a new one: TestLagIsEachSitesAndZeroAtRest
// in cmd/viewcount). Property, over random traffic of a few sites in the
// real stream and store, in each state a partition passes through (all in
// the stream; a prefix of each partition stored, valid and rejected, not
// fed; that prefix fed): PendingCounter counts, per site and page, exactly
// the events not yet in the rollups (every one in the stream after what is
// stored, the valid ones stored and not fed), and per site the receive
// time of the oldest of them, no entry for a site with none.
func TestPendingOldestPerSite(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(seed, 77))
			conn, st := streamtest.Open(t, testPartitions), storetest.Migrated(t)
			// Messages of one to three events of one partition, receive
			// times nearly in order (as ingest stamps them), some sites
			// busier than others and one (d.example) never seen.
			sites := []string{"a.example", "a.example", "a.example", "b.example", "c.example"}
			type msg struct {
				seq  uint64
				part int
				evs  []viewcount.Event
			}
			var msgs []msg
			t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
			for i := range 150 + rnd.IntN(150) {
				v := uint64(rnd.IntN(400))
				part := viewcount.Partition(v, testPartitions)
				var evs []viewcount.Event
				for range 1 + rnd.IntN(3) {
					at := t0.Add(time.Duration(i)*time.Second + time.Duration(rnd.IntN(3000)-1500)*time.Millisecond)
					evs = append(evs, viewcount.Event{Time: at, Site: sites[rnd.IntN(len(sites))], Page: fmt.Sprintf("/p%d", rnd.IntN(5)),
						ID: fmt.Sprintf("s%d-%d-%d", seed, i, len(evs)), Visitor: v, UA: "Mozilla/5.0", Source: viewcount.SourcePixel})
				}
				ack, err := conn.JS.Publish(ctx, viewcount.Subject(part), viewcount.AppendEvents(nil, evs))
				if err != nil {
					t.Fatal(err)
				}
				msgs = append(msgs, msg{ack.Sequence, part, evs})
			}
			pc := PendingCounter{JS: conn.JS, Store: st, Partitions: testPartitions, Settle: 2 * time.Minute}
			check := func(state string, pending func(m msg, i int) bool) {
				t.Helper()
				want := viewcount.NewPending()
				for _, m := range msgs {
					for i, e := range m.evs {
						if pending(m, i) {
							want.Add(e.Site, e.Page, 1, e.Time)
						}
					}
				}
				got, err := pc.Count(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if !maps.Equal(got.Events, want.Events) {
					t.Errorf("%s: pending events %v, want %v", state, got.Events, want.Events)
				}
				if !maps.EqualFunc(got.Oldest, want.Oldest, time.Time.Equal) {
					t.Errorf("%s: oldest per site %v, want %v", state, got.Oldest, want.Oldest)
				}
				if _, ok := got.Oldest["d.example"]; ok {
					t.Errorf("%s: a site without events is behind", state)
				}
			}
			check("all in the stream", func(msg, int) bool { return true })

			// Each partition's first messages stored as a validator stores
			// them (batch = the last one's sequence), a sixth rejected.
			storedTo := map[int]uint64{}
			for p := range testPartitions {
				var own []msg
				for _, m := range msgs {
					if m.part == p {
						own = append(own, m)
					}
				}
				if len(own) == 0 {
					continue
				}
				k := rnd.IntN(len(own) + 1)
				if k == 0 {
					continue
				}
				storedTo[p] = own[k-1].seq
				var rows []viewcount.Verdict
				for _, m := range own[:k] {
					for i, e := range m.evs {
						r := viewcount.Valid
						if (m.seq+uint64(i))%6 == 0 {
							r = viewcount.BotUA
						}
						rows = append(rows, viewcount.Verdict{Event: e, Reason: r, Partition: uint16(p), Seq: m.seq, Index: uint32(i), Batch: storedTo[p]})
					}
				}
				if err := st.InsertViews(ctx, fmt.Sprintf("pending-%d-%d", seed, p), rows); err != nil {
					t.Fatal(err)
				}
			}
			stored := func(m msg) bool { return storedTo[m.part] >= m.seq }
			valid := func(m msg, i int) bool { return (m.seq+uint64(i))%6 != 0 }
			check("stored, not fed", func(m msg, i int) bool { return !stored(m) || valid(m, i) })

			if _, err := feed.CatchUp(ctx, st); err != nil {
				t.Fatal(err)
			}
			check("stored and fed", func(m msg, _ int) bool { return !stored(m) })
		})
	}
}

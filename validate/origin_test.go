package validate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/rollup/repair"
	"github.com/viewcount/viewcount/validate/judge"
)

// TestRevalidateKeepsOrigins: a revalidation that reads views_raw (the
// stream's retention passed) judges each view's page host as the
// validator did: views_raw keeps it (migration 018), so foreign_origin
// verdicts stay and no other view turns foreign.
func TestRevalidateKeepsOrigins(t *testing.T) {
	var evs []viewcount.Event
	at := trafficStart
	for i := range 90 {
		at = at.Add(700 * time.Millisecond)
		e := viewcount.Event{Time: at, Site: "a.example", Page: fmt.Sprintf("/o%d", i%7), ID: fmt.Sprintf("o%d", i),
			UA: uaFirefoxWin, Source: viewcount.SourcePixel, Network: uint64(1 + i), Headers: browserRequest}
		e.Visitor = viewcount.NetworkKey(uint64(i+1)*0x9E3779B97F4A7C15, e.Network)
		e.Origin = [...]string{"fraud.test", "www.a.example", ""}[i%3]
		evs = append(evs, e)
	}
	p := newPipeline(t, evs)
	p.validateWith(t, judge.DefaultConfig(), len(evs))
	before := p.siteVerdicts(t, "a.example")
	foreign := 0
	for _, v := range before {
		if strings.HasSuffix(v, " foreign_origin") {
			foreign++
		}
	}
	if foreign != 30 {
		t.Fatalf("%d foreign_origin verdicts, want 30: %q", foreign, before)
	}
	s, err := p.conn.JS.Stream(context.Background(), viewcount.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	last, _ := s.Info(context.Background())
	if err := s.Purge(context.Background(), jetstream.WithPurgeSequence(last.State.LastSeq)); err != nil {
		t.Fatal(err)
	}
	r, err := NewRevalidator(judge.DefaultConfig(), Revalidator{JS: p.conn.JS, Partitions: testPartitions, Sites: p.sites,
		Store: p.store, Rollups: repair.NewRebuilder(p.store, quiet()), Owner: "revalidator", Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(context.Background(), viewcount.RevalidateRequest{Site: "a.example", From: evs[0].Time, To: at.Add(time.Millisecond), Who: "test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range res.Sources {
		if src.Source != SourceRaw {
			t.Fatalf("partition %d read from %s, want views_raw", src.Partition, src.Source)
		}
	}
	if after := p.siteVerdicts(t, "a.example"); res.Changed != 0 || !slices.Equal(after, before) {
		t.Errorf("revalidated from views_raw: %d changed (%v)", res.Changed, res.ByReason)
	}
}

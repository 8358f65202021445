package validate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/rollup/repair"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
	"github.com/viewcount/viewcount/validate/judge"
)

// engagementTraffic is testTraffic with engagement reports: about one
// view in three is reported on between 2 and 90 s later, some twice (the
// second with more time), some claiming more than elapsed, and a few name
// no view. Version 1 (v1Config) calls every Firefox 145 view a bot, so
// their reports are orphans and their visits are not counted; version 2
// counts both.
func engagementTraffic(n int) []viewcount.Event {
	views := testTraffic(n)
	rng := rand.New(rand.NewPCG(3, 5))
	out := slices.Clone(views)
	for i, v := range views {
		if strings.HasPrefix(v.Page, "/flood/") || rng.IntN(3) != 0 {
			continue
		}
		age := time.Duration(2000+rng.IntN(88000)) * time.Millisecond
		r := v
		r.Kind, r.Source, r.Time = viewcount.KindEngagement, viewcount.SourceBeacon, v.Time.Add(age)
		r.Hints = viewcount.Hints{}
		engaged := uint32(rng.Int64N(age.Milliseconds()))
		if i%29 == 0 {
			engaged = uint32(age.Milliseconds()) + 20000 // overclaims
		}
		r.Engagement = viewcount.Engagement{EngagedMS: engaged, Scroll: uint8(rng.IntN(101)), AgeMS: uint32(age.Milliseconds())}
		if i%41 == 0 {
			r.ID += "-nothing" // names no view
		}
		out = append(out, r)
		if rng.IntN(4) == 0 {
			again := r
			again.Time = r.Time.Add(time.Duration(1000+rng.IntN(20000)) * time.Millisecond)
			again.Engagement.AgeMS += uint32(again.Time.Sub(r.Time).Milliseconds())
			again.Engagement.EngagedMS = min(again.Engagement.AgeMS, r.Engagement.EngagedMS+uint32(rng.IntN(5000)))
			again.Engagement.Scroll = max(r.Engagement.Scroll, uint8(rng.IntN(101)))
			out = append(out, again)
		}
	}
	slices.SortStableFunc(out, func(a, b viewcount.Event) int { return a.Time.Compare(b.Time) })
	return out
}

// noSettle turns settling off, so every verdict reaches the visit stage in
// stream order, the order visitOracle replays views_raw in.
func noSettle(cfg judge.Config) judge.Config {
	cfg.SettleWindow = -time.Second
	return cfg
}

// TestRevalidateVisits: a revalidation rewrites the visit stage's columns
// with the verdicts. Judged with version 1, then revalidated with version
// 2: over the whole history, every row (verdicts, visit columns, the
// hints a report borrows) equals a fresh version-2 run's; over a range in
// the middle, views_raw afterwards is what the visit stage computes over
// its own verdicts (version 1's before and after the range, version 2's
// in it) in stream order, rows after the range included, and the rollups
// agree with views_raw. A second revalidation with the same rules finds
// nothing to change.
func TestRevalidateVisits(t *testing.T) {
	evs := engagementTraffic(1800)
	v1, v2 := noSettle(v1Config()), noSettle(judge.DefaultConfig())
	fresh := newPipeline(t, evs)
	fresh.validateWith(t, v2, len(evs))
	want := fresh.siteVisitRows(t, "a.example")

	first, last := evs[0].Time, evs[len(evs)-1].Time
	third := last.Sub(first) / 3
	for _, tc := range []struct {
		name     string
		from, to time.Time
	}{
		{"whole", first, last.Add(time.Millisecond)},
		{"middle", first.Add(third), first.Add(2 * third)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newPipeline(t, evs)
			p.validateWith(t, v1, len(evs))
			before := p.siteVisitRows(t, "a.example")
			if slices.Equal(before, want) {
				t.Fatal("version 1 judged like version 2: the test would not notice anything")
			}
			r, err := NewRevalidator(v2, Revalidator{JS: p.conn.JS, Partitions: testPartitions, Sites: p.sites,
				Store: p.store, Rollups: repair.NewRebuilder(p.store, quiet()), Owner: "revalidator", Logger: quiet()})
			if err != nil {
				t.Fatal(err)
			}
			req := viewcount.RevalidateRequest{Site: "a.example", From: tc.from, To: tc.to, Who: "test"}
			res, err := r.Run(context.Background(), req, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Changed == 0 || res.Visits == 0 {
				t.Fatalf("%d verdicts and %d visit rows changed: the test would not notice anything", res.Changed, res.Visits)
			}
			got := p.siteVisitRows(t, "a.example")
			if tc.name == "whole" {
				if diff := firstDiff(got, want); diff != "" {
					t.Errorf("revalidated against a fresh version-2 run: %s", diff)
				}
			} else if res.Followed == 0 {
				t.Errorf("no report after the range followed its view's new verdict (%+v)", res)
			}
			if diff := visitOracle(t, p, v2); diff != "" {
				t.Errorf("views_raw's visit columns against the visit stage over its verdicts: %s", diff)
			}
			diffs, err := repair.Recount(context.Background(), p.store, time.Now(), 3)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range diffs {
				if d.Differing != 0 {
					t.Errorf("%s drifts from views_raw after the revalidation: %+v", d.Table, d.Examples)
				}
			}
			again, err := r.Run(context.Background(), req, nil)
			if err != nil {
				t.Fatal(err)
			}
			if again.Changed != 0 || again.Visits != 0 || again.Followed != 0 {
				t.Errorf("revalidated again with the same rules: %d verdicts, %d visit rows, %d reports changed; want none",
					again.Changed, again.Visits, again.Followed)
			}
			t.Logf("%d of %d verdicts changed, %d visit rows rewritten, %d reports followed their view",
				res.Changed, res.Judged, res.Visits, res.Followed)
		})
	}
}

// visitColumns are views_raw's visit and borrowed-hint columns, as text.
const visitColumns = `verdict, visit_set, toUnixTimestamp64Milli(view_time), toUnixTimestamp64Milli(visit_start),
	entry_page, entry_ref_host, entry_ref_source, entry_utm_source, entry_utm_medium, entry_utm_campaign, prev_page,
	d_visits, d_bounces, d_visit_ms, d_engaged_ms, eng_from, eng_to, scroll_from, scroll_to,
	if(kind = 1 AND verdict = 'valid', concat(toString(hints_present), ' ', toString(screen_w), 'x', toString(screen_h), ' ', screen), '')`

// siteVisitRows is one site's rows: id, kind, verdict and visit columns.
func (p *pipeline) siteVisitRows(t *testing.T, site string) []string {
	t.Helper()
	res, err := p.store.Query(context.Background(), "SELECT partition, seq, idx, event_id, kind, "+visitColumns+
		" FROM views_raw WHERE site = {site:String} ORDER BY partition, seq, idx", store.Params{"site": site})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(res.TextRows()))
	for i, r := range res.TextRows() {
		out[i] = strings.Join(r, " ")
	}
	return out
}

func firstDiff(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("row %d:\n got  %s\n want %s", i, got[i], want[i])
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d rows, want %d", len(got), len(want))
	}
	return ""
}

// visitOracle replays views_raw, partition by partition in stream order,
// through a fresh visit stage, with each view's stored verdict (an
// engagement report's is the stage's to decide), and compares what it
// decides with what views_raw holds: "" when every row agrees. It reads
// nothing a revalidation keeps, only the table.
func visitOracle(t *testing.T, p *pipeline, cfg judge.Config) string {
	t.Helper()
	q := `SELECT partition, seq, idx, toUnixTimestamp64Milli(time), site, page, referrer, ua, event_id, visitor, network,
    toUInt8(webdriver), toUInt8(datacenter), toString(source),
    toUInt8(hints_present), screen_w, screen_h, languages, toUInt8(tz), toUInt8(ua_data), toUInt8(secure_context),
    toUInt8(window_reported), window_w, window_h,
    utm_source, utm_medium, utm_campaign, country, req_flags, asn, origin,
    kind, engaged_ms, scroll, age_ms, verdict AS stored_verdict,
    toUInt8(visit_set) AS visit_set, toUnixTimestamp64Milli(view_time) AS view_ms,
    toUnixTimestamp64Milli(visit_start) AS start_ms, entry_page, entry_ref_host,
    toString(entry_ref_source) AS entry_ref_source, toString(entry_utm_source) AS entry_utm_source,
    toString(entry_utm_medium) AS entry_utm_medium, entry_utm_campaign, prev_page,
    d_visits, d_bounces, d_visit_ms, d_engaged_ms, eng_from, eng_to, scroll_from, scroll_to
FROM views_raw ORDER BY partition, seq, idx`
	res, err := p.store.Query(context.Background(), q, nil)
	if err != nil {
		t.Fatal(err)
	}
	var rules *judge.Rules
	part, checked := -1, 0
	for res.Next() {
		if pp := int(res.Uint16("partition")); pp != part {
			part = pp
			if rules, err = judge.NewRules(cfg, p.sites); err != nil {
				t.Fatal(err)
			}
		}
		v := viewcount.Verdict{Event: rawEvent(res)}
		stored := viewcount.Reason(res.String("stored_verdict"))
		if v.Kind == viewcount.KindView {
			v.Reason = stored
		}
		rules.Visit(&v)
		got, wantCols := storedVisit(res), colsOf(&v.Visit)
		if v.Reason != stored || got != wantCols {
			return fmt.Sprintf("partition %d seq %d idx %d (%s %s, kind %d):\n stored verdict %s, visit %+v\n oracle verdict %s, visit %+v",
				part, res.Uint64("seq"), res.Uint32("idx"), v.Site, v.ID, v.Kind, stored, got, v.Reason, wantCols)
		}
		checked++
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("views_raw is empty")
	}
	return ""
}

// FuzzChangeRow: a changed row's strings (pages, referrer hosts and
// campaigns are what visitors sent: any bytes, invalid UTF-8 included)
// reach revalidate_changes byte for byte through the TSV that carries
// them.
func FuzzChangeRow(f *testing.F) {
	st := storetest.Migrated(f)
	for _, s := range []string{"/", "/a\tb\nc\\d\re", `\N`, "\x00\xff\xfe", "é/ü?q=1#x", "\\", "\\t"} {
		f.Add(s, s+"x")
	}
	f.Fuzz(func(t *testing.T, page, campaign string) {
		ctx := context.Background()
		for _, name := range []string{"revalidate_prepare"} {
			for _, q := range queries.Repair(name) {
				if err := st.Exec(ctx, q, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
		c := changedVerdict{p: 1, v: verdict{seq: 7, idx: 2, new: viewcount.Valid, inRange: true,
			visit:  visitCols{set: true, viewMS: 1, startMS: 2, entryPage: page, prevPage: page + "/", utm: viewcount.UTM{Campaign: campaign}},
			report: &reportHints{present: true, w: 3, h: 4, screen: campaign}}}
		var b strings.Builder
		changeRow(&b, c, "v9")
		if err := st.Exec(ctx, queries.Repair("revalidate_add")[0], store.Params{"rows": b.String()}); err != nil {
			t.Fatalf("%q: %v", b.String(), err)
		}
		get := func(col string) string {
			return fmt.Sprintf("joinGet('revalidate_changes', '%s', toUInt16(1), toUInt64(7), toUInt32(2)) AS %s", col, col)
		}
		res, err := st.Query(ctx, "SELECT "+get("entry_page")+", "+get("prev_page")+", "+get("entry_utm_campaign")+", assumeNotNull("+
			strings.TrimSuffix(get("screen"), " AS screen")+") AS screen, "+get("rules"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Next() {
			t.Fatalf("%q: no row", b.String())
		}
		if got := [...]string{res.String("entry_page"), res.String("prev_page"), res.String("entry_utm_campaign"), res.String("screen"), res.String("rules")}; got != [...]string{page, page + "/", campaign, campaign, "v9"} {
			t.Errorf("read back %q, want %q %q %q", got, page, campaign, "v9")
		}
		if res.Next() || res.Err() != nil {
			t.Errorf("more than one row, or %v", res.Err())
		}
	})
}

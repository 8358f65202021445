package store

// This file is in package store, not store_test, so it measures and checks
// the adapter's own appendColumns rather than a copy of it.

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	chproto "github.com/ClickHouse/ch-go/proto"
	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/column"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/ClickHouse/clickhouse-go/v2/lib/proto"

	"github.com/viewcount/viewcount"
)

// viewsRawTypes are the views_raw columns as a server describes them in the
// header block it answers an INSERT with (sql/migrations/001, 003, 007, 013, 018 and 021), in
// viewsColumns order, the order clickhouse-go sorts that header into.
var viewsRawTypes = [][2]string{
	{"time", "DateTime64(3, 'UTC')"}, {"site", "LowCardinality(String)"}, {"page", "String"},
	{"referrer", "String"}, {"ua", "String"}, {"event_id", "String"}, {"visitor", "UInt64"},
	{"network", "UInt64"}, {"webdriver", "Bool"}, {"datacenter", "Bool"}, {"hints_present", "Bool"},
	{"screen_w", "UInt16"}, {"screen_h", "UInt16"}, {"languages", "UInt8"}, {"tz", "Bool"},
	{"ua_data", "Bool"}, {"secure_context", "Bool"}, {"source", "LowCardinality(String)"},
	{"verdict", "LowCardinality(String)"}, {"partition", "UInt16"}, {"seq", "UInt64"}, {"idx", "UInt32"},
	{"utm_source", "LowCardinality(String)"}, {"utm_medium", "LowCardinality(String)"}, {"utm_campaign", "String"},
	{"country", "LowCardinality(String)"}, {"ref_host", "String"}, {"ref_source", "LowCardinality(String)"},
	{"browser", "LowCardinality(String)"}, {"os", "LowCardinality(String)"}, {"device", "LowCardinality(String)"},
	{"screen", "LowCardinality(String)"}, {"batch", "UInt64"}, {"req_flags", "UInt16"}, {"asn", "UInt32"},
	{"rules", "LowCardinality(String)"}, {"window_reported", "Bool"}, {"window_w", "UInt16"}, {"window_h", "UInt16"},
	{"origin", "LowCardinality(String)"},
	{"kind", "UInt8"}, {"engaged_ms", "UInt32"}, {"scroll", "UInt8"}, {"age_ms", "UInt32"}, {"visit_set", "Bool"},
	{"view_time", "DateTime64(3, 'UTC')"}, {"visit_start", "DateTime64(3, 'UTC')"}, {"entry_page", "String"},
	{"entry_ref_host", "String"}, {"entry_ref_source", "LowCardinality(String)"},
	{"entry_utm_source", "LowCardinality(String)"}, {"entry_utm_medium", "LowCardinality(String)"},
	{"entry_utm_campaign", "String"}, {"prev_page", "String"}, {"d_visits", "Int8"}, {"d_bounces", "Int8"},
	{"d_visit_ms", "Int32"}, {"d_engaged_ms", "Int32"}, {"eng_from", "Int8"}, {"eng_to", "Int8"},
	{"scroll_from", "Int8"}, {"scroll_to", "Int8"},
}

// newViewsBlock returns an empty views_raw block, as PrepareBatch gets one
// from the server's header: new columns for every batch.
func newViewsBlock(tb testing.TB) *proto.Block {
	tb.Helper()
	b, err := viewsBlock()
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func viewsBlock() (*proto.Block, error) {
	b := proto.NewBlock()
	for _, c := range viewsRawTypes {
		if err := b.AddColumn(c[0], column.Type(c[1])); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// blockBatch is the part of clickhouse-go's native batch appendColumns
// uses (Columns, the block's own columns), over a bare block: what
// InsertViews does before Send, minus the connection. Any other Batch
// method panics on the nil interface.
type blockBatch struct {
	driver.Batch
	block *proto.Block
}

func (b blockBatch) Columns() []column.Interface { return slices.Clone(b.block.Columns) }

// nativeRow is one verdict as the values of batch.Append, in viewsColumns
// order: the row-wise way to fill the same block.
func nativeRow(r *viewcount.Verdict) []any {
	h, v := &r.Hints, &r.Visit
	return []any{r.Time.UTC(), r.Site, r.Page, r.Referrer, r.UA, r.ID, r.Visitor, r.Network, r.Webdriver,
		r.Datacenter, h.Present, h.ScreenW, h.ScreenH, h.Languages, h.TZ, h.UAData, h.Secure,
		r.Source.String(), string(r.Reason), r.Partition, r.Seq, r.Index,
		r.UTM.Source, r.UTM.Medium, r.UTM.Campaign, r.Country, r.Dims.RefHost, r.Dims.RefSource,
		r.Dims.Browser, r.Dims.OS, r.Dims.Device, r.Dims.Screen, r.Batch, uint16(r.Headers), r.ASN, r.Rules,
		h.Window, h.OuterW, h.OuterH, r.Origin,
		uint8(r.Kind), r.Engagement.EngagedMS, r.Engagement.Scroll, r.Engagement.AgeMS, v.Set,
		visitTime(v.ViewTime), visitTime(v.VisitStart), v.EntryPage, v.EntryRefHost, v.EntryRefSource,
		v.EntryUTM.Source, v.EntryUTM.Medium, v.EntryUTM.Campaign, v.PrevPage, v.Visits, v.Bounces, v.VisitMS, v.EngagedMS,
		visitBucket(v, v.EngagedFrom), visitBucket(v, v.EngagedTo), visitBucket(v, v.ScrollFrom), visitBucket(v, v.ScrollTo)}
}

// visitTime is a VisitDelta time as nativeRow gives it to the driver for a
// DateTime64: the zero time as the column's default, the Unix epoch.
func visitTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.UnixMilli(0).UTC()
	}
	return t.UTC()
}

// nativeBenchRows returns n verdicts shaped like makeFixtureSpan's (two
// sites, a dozen pages, 30% invalid, hints on most) with real browser UAs,
// spread over the few seconds a batch covers; a third of them are
// engagement reports (the engagement reasons among the rejected), and the
// valid ones carry a visit delta (benchVisit).
func nativeBenchRows(n int) []viewcount.Verdict {
	rng := rand.New(rand.NewPCG(42, 1))
	uas := []string{
		"Mozilla/5.0 (X11; Linux x86_64; rv:145.0) Gecko/20100101 Firefox/145.0",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
	}
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	rows := make([]viewcount.Verdict, n)
	for i := range rows {
		reason := viewcount.Valid
		if rng.IntN(10) < 3 {
			reason = viewcount.Reasons[1+rng.IntN(len(viewcount.Reasons)-1)]
		}
		rows[i] = viewcount.Verdict{
			Event: viewcount.Event{
				Time:       start.Add(time.Duration(rng.Int64N(20_000)) * time.Millisecond),
				Site:       []string{"a.example", "b.example"}[rng.IntN(2)],
				Page:       "/blog/post-" + strconv.Itoa(rng.IntN(12)),
				Referrer:   "https://news.example/item?id=" + strconv.Itoa(rng.IntN(5)),
				UA:         uas[rng.IntN(len(uas))],
				ID:         strconv.FormatUint(rng.Uint64(), 16),
				Visitor:    rng.Uint64N(1500) * 0x9E3779B97F4A7C15,
				Network:    rng.Uint64(),
				Webdriver:  reason == viewcount.Headless,
				Source:     viewcount.Source(1 + rng.IntN(2)),
				Datacenter: reason == viewcount.Datacenter,
				Hints: viewcount.Hints{Present: i%3 != 0, ScreenW: uint16(rng.IntN(4000)), ScreenH: uint16(rng.IntN(3000)),
					Languages: uint8(rng.IntN(5)), TZ: i%2 == 0, UAData: i%5 == 0, Secure: i%7 != 0},
				Headers: viewcount.HeaderFlags(i * 37 % 512), ASN: uint32(i * 7919),
			},
			Reason:    reason,
			Partition: uint16(rng.IntN(8)),
			Seq:       uint64(1000 + i/10),
			Index:     uint32(i % 10),
			Batch:     1100,
		}
		benchVisit(&rows[i], i)
	}
	return rows
}

// benchVisit makes every third verdict an engagement report and gives a
// valid one the delta the visit stage would: a view opening a visit or
// continuing one (moving the exit from the page before), a report moving
// its view's engaged-time and scroll buckets. The i-th of a batch.
func benchVisit(r *viewcount.Verdict, i int) {
	engagement := i%3 == 2 || strings.HasPrefix(string(r.Reason), "engagement_")
	if engagement {
		r.Kind = viewcount.KindEngagement
		r.Engagement = viewcount.Engagement{EngagedMS: uint32(i%60) * 1000, Scroll: uint8(i % 101), AgeMS: uint32(i%60)*1000 + 50}
	}
	if r.Reason != viewcount.Valid {
		return
	}
	start := r.Time.Add(-time.Duration(i%600) * time.Second)
	v := viewcount.VisitDelta{Set: true, ViewTime: r.Time, VisitStart: start, EntryPage: "/blog/post-" + strconv.Itoa(i%12),
		EntryRefHost: "news.example", EntryRefSource: "news.example", EngagedFrom: -1, EngagedTo: -1, ScrollFrom: -1, ScrollTo: -1}
	switch {
	case engagement:
		v.ViewTime = r.Time.Add(-time.Duration(r.Engagement.AgeMS) * time.Millisecond)
		v.EngagedMS, v.VisitMS = int32(r.Engagement.EngagedMS), int32(i%7)*1000
		v.EngagedFrom, v.EngagedTo = -1, viewcount.EngagedBucket(r.Engagement.EngagedMS)
		v.ScrollFrom, v.ScrollTo = -1, viewcount.ScrollBucket(r.Engagement.Scroll)
	case i%4 == 0:
		v.VisitStart, v.Visits, v.Bounces = r.Time, 1, 1
	default:
		v.PrevPage, v.VisitMS, v.Bounces = "/blog/post-"+strconv.Itoa((i+1)%12), int32(i%30)*1000, -int8(i%2)
	}
	r.Visit = v
}

// TestAppendColumnsNative checks, without a server, that appendColumns
// fills a views_raw block that encodes and decodes back to the rows
// (TestAppendColumnsBytes checks it byte for byte against the driver's
// Append).
func TestAppendColumnsNative(t *testing.T) {
	names := make([]string, len(viewsRawTypes))
	for i, c := range viewsRawTypes {
		names[i] = c[0]
	}
	if got := strings.Join(names, ", "); got != viewsColumns {
		t.Fatalf("viewsRawTypes names\n %s\nwant viewsColumns\n %s", got, viewsColumns)
	}
	rows := nativeBenchRows(100)
	block := newViewsBlock(t)
	if err := new(viewsEncoder).appendColumns(blockBatch{block: block}, rows); err != nil {
		t.Fatal(err)
	}
	var buf chproto.Buffer
	if err := block.Encode(&buf, clickhouse.ClientTCPProtocolVersion); err != nil {
		t.Fatal(err)
	}
	got := proto.NewBlock()
	if err := got.Decode(chproto.NewReader(bytes.NewReader(buf.Buf)), clickhouse.ClientTCPProtocolVersion); err != nil {
		t.Fatal(err)
	}
	if got.Rows() != len(rows) || strings.Join(got.ColumnsNames(), ", ") != viewsColumns {
		t.Fatalf("decoded %d rows of %v", got.Rows(), got.ColumnsNames())
	}
	for i := range rows {
		want := nativeRow(&rows[i])
		for j, col := range got.Columns {
			v := col.Row(i, false)
			if tm, ok := v.(time.Time); ok {
				if !tm.Equal(want[j].(time.Time)) {
					t.Fatalf("row %d %s: %v, want %v", i, col.Name(), v, want[j])
				}
				continue
			}
			if v != want[j] {
				t.Fatalf("row %d %s: %#v, want %#v", i, col.Name(), v, want[j])
			}
		}
	}
}

// BenchmarkClickHouseNativeEncode is the client-side cost of a 10k-row
// InsertViews on a ClickHouse server (the batch size of
// BenchmarkAppendNative): a fresh block from the header, the rows
// appended, the block encoded at the client's protocol revision into a
// reused buffer, as the driver's sendData does (uncompressed; the DSN's
// compress option would add LZ4 on top). "columns" is appendColumns, what
// InsertViews ships, its encoder reused from batch to batch through the
// store's pool as there; "rows" is batch.Append per row, for comparison.
func BenchmarkClickHouseNativeEncode(b *testing.B) {
	rows := nativeBenchRows(10_000)
	run := func(b *testing.B, fill func(*proto.Block) error) {
		var buf chproto.Buffer
		for b.Loop() {
			block := newViewsBlock(b)
			if err := fill(block); err != nil {
				b.Fatal(err)
			}
			buf.Reset()
			if err := block.Encode(&buf, clickhouse.ClientTCPProtocolVersion); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(int64(len(buf.Buf)))
		b.ReportMetric(float64(b.N*len(rows))/b.Elapsed().Seconds(), "rows/s")
	}
	b.Run("columns", func(b *testing.B) {
		var s chStore
		run(b, func(block *proto.Block) error { return s.appendColumns(blockBatch{block: block}, rows) })
	})
	b.Run("rows", func(b *testing.B) {
		run(b, func(block *proto.Block) error {
			for i := range rows {
				if err := block.Append(nativeRow(&rows[i])...); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

package store

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	chproto "github.com/ClickHouse/ch-go/proto"
	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/column"
	"github.com/ClickHouse/clickhouse-go/v2/lib/proto"

	"github.com/viewcount/viewcount"
)

// The server adapter's encoder must send the bytes clickhouse-go's own
// Append would build from the same rows: these tests compare the two on
// rows at the edges, across reused encoders and from several goroutines.

// variedVerdicts are rows at the edges of every column: the zero verdict
// (empty strings, zero times), every field set to its largest value,
// unicode, a time outside UTC and below the millisecond, a visit delta
// with zero times, and LowCardinality values that come back after an
// empty one, so the dictionaries' order is exercised.
func variedVerdicts() []viewcount.Verdict {
	paris := time.FixedZone("CET", 3600)
	full := viewcount.Verdict{
		Event: viewcount.Event{
			Time: time.Date(2026, 3, 29, 2, 30, 0, 123_456_789, paris),
			Site: "ünïcödé.example", Page: "/日本語/ページ?", Referrer: "https://ex.example/ä\tb\nc",
			UA: "Mozilla/5.0 🚀", ID: "ffffffffffffffff", Visitor: ^uint64(0), Network: ^uint64(0) - 1,
			Webdriver: true, Source: viewcount.SourceBeacon, Datacenter: true,
			Hints: viewcount.Hints{Present: true, ScreenW: 65535, ScreenH: 65534, Languages: 255, TZ: true,
				UAData: true, Secure: true, Window: true, OuterW: 65533, OuterH: 1},
			UTM:     viewcount.UTM{Source: "nëwsletter", Medium: "e-mail", Campaign: "spring 🌸"},
			Country: "DE", Headers: viewcount.HeaderFlags(0xffff), ASN: ^uint32(0), Origin: "blog.ünïcödé.example",
			Kind: viewcount.KindEngagement, Engagement: viewcount.Engagement{EngagedMS: ^uint32(0), Scroll: 100, AgeMS: ^uint32(0)},
		},
		Reason: viewcount.Duplicate, Partition: 65535, Seq: ^uint64(0), Index: ^uint32(0), Batch: ^uint64(0),
		Dims: viewcount.Dims{RefHost: "ex.example", RefSource: "Ex", Browser: "Firefox", OS: "Linux",
			Device: "desktop", Screen: "desktop"},
		Rules: "2026-11-29.1",
		Visit: viewcount.VisitDelta{Set: true, ViewTime: time.Date(2026, 3, 29, 2, 29, 59, 999_999_999, paris),
			VisitStart: time.Date(1970, 1, 1, 0, 0, 0, 1_000_000, time.UTC), EntryPage: "/ëntry",
			EntryRefHost: "ex.example", EntryRefSource: "Ex", EntryUTM: viewcount.UTM{Source: "a", Medium: "b", Campaign: "c"},
			PrevPage: "/prév", Visits: 127, Bounces: -128, VisitMS: -2147483648, EngagedMS: 2147483647,
			EngagedFrom: 33, EngagedTo: -1, ScrollFrom: 0, ScrollTo: 20},
	}
	zeroTimes := full
	zeroTimes.Time = time.Time{}
	zeroTimes.Visit.ViewTime, zeroTimes.Visit.VisitStart = time.Time{}, time.Time{}
	zeroTimes.Source, zeroTimes.Reason = viewcount.Source(7), viewcount.Reason("")
	emptyLC := full
	emptyLC.Site, emptyLC.Country, emptyLC.Dims, emptyLC.UTM, emptyLC.Rules, emptyLC.Origin = "", "", viewcount.Dims{}, viewcount.UTM{}, "", ""
	unset := full
	unset.Visit = viewcount.VisitDelta{EngagedFrom: 5, ScrollTo: 5} // not Set: the buckets go as -1
	unset.Source, unset.Reason = viewcount.SourcePixel, viewcount.Valid
	rows := []viewcount.Verdict{{}, full, emptyLC, zeroTimes, {}, unset, full, emptyLC}
	return append(rows, nativeBenchRows(50)...)
}

// distinctSites returns n rows whose sites, origins and rules all differ,
// so those dictionaries hold n values (and keys of the width n needs).
func distinctSites(n int) []viewcount.Verdict {
	rows := nativeBenchRows(n)
	for i := range rows {
		rows[i].Site = "s" + strconv.Itoa(i) + ".example"
		rows[i].Origin = "o" + strconv.Itoa(n-i) + ".example"
		rows[i].Rules = strconv.Itoa(i)
	}
	return rows
}

// encodeBlock fills a fresh views_raw block with fill and returns it
// encoded, as InsertViews would send it.
func encodeBlock(fill func(*proto.Block) error) ([]byte, error) {
	block, err := viewsBlock()
	if err != nil {
		return nil, err
	}
	if err := fill(block); err != nil {
		return nil, err
	}
	var buf chproto.Buffer
	if err := block.Encode(&buf, clickhouse.ClientTCPProtocolVersion); err != nil {
		return nil, err
	}
	return buf.Buf, nil
}

// byAppend is the block clickhouse-go builds from rows appended one by
// one (nativeRow's values): the bytes the encoder must send.
func byAppend(tb testing.TB, rows []viewcount.Verdict) []byte {
	tb.Helper()
	b, err := encodeBlock(func(block *proto.Block) error {
		for i := range rows {
			if err := block.Append(nativeRow(&rows[i])...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// byEncoder is the block e builds from rows.
func byEncoder(e *viewsEncoder, rows []viewcount.Verdict) ([]byte, error) {
	return encodeBlock(func(block *proto.Block) error { return e.appendColumns(blockBatch{block: block}, rows) })
}

// sameBytes reports where got first differs from want.
func sameBytes(got, want []byte) error {
	if bytes.Equal(got, want) {
		return nil
	}
	i := 0
	for i < min(len(got), len(want)) && got[i] == want[i] {
		i++
	}
	return fmt.Errorf("%d bytes, want %d: first difference at byte %d", len(got), len(want), i)
}

func TestAppendColumnsBytes(t *testing.T) {
	f := func(name string, rows []viewcount.Verdict) {
		t.Helper()
		got, err := byEncoder(new(viewsEncoder), rows)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := sameBytes(got, byAppend(t, rows)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	f("varied", variedVerdicts())
	f("one full row", variedVerdicts()[1:2])
	f("the zero verdict", make([]viewcount.Verdict, 1))
	f("bench rows", nativeBenchRows(2000))
	// The driver's key width follows the number of values appended:
	// UInt8 below 255, UInt16 below 65535, then UInt32.
	for _, n := range []int{254, 255, 300} {
		f(strconv.Itoa(n)+" sites", distinctSites(n))
	}
	if !testing.Short() {
		f("65535 sites", distinctSites(65535))
	}
}

// TestAppendColumnsReuse: one encoder through batches of other sizes and
// values gives each the bytes a fresh encoder does, so nothing of a batch
// before is left in its buffer or its dictionaries; across the bound on
// kept values too.
func TestAppendColumnsReuse(t *testing.T) {
	bench, varied := nativeBenchRows(3000), variedVerdicts()
	batches := [][]viewcount.Verdict{bench, varied, bench[:7], distinctSites(300), varied[2:5], bench[100:400],
		distinctSites(maxLowCardValues + 1), varied, distinctSites(10)}
	e := new(viewsEncoder)
	for i, rows := range batches {
		want, err := byEncoder(new(viewsEncoder), rows)
		if err != nil {
			t.Fatal(err)
		}
		got, err := byEncoder(e, rows)
		if err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		if err := sameBytes(got, want); err != nil {
			t.Errorf("batch %d (%d rows) through a used encoder: %v", i, len(rows), err)
		}
		if e.rows != nil || e.cols != nil {
			t.Fatalf("batch %d: the encoder still holds the batch's rows or columns", i)
		}
	}
	if len(e.values) > len(distinctSites(10))+len(varied)*16 {
		t.Errorf("%d values kept after a batch past the bound, want the last batches' only", len(e.values))
	}
}

// TestAppendColumnsConcurrent runs InsertViews' path (the chStore's pool
// of encoders) from several goroutines, each batch checked against its
// bytes; run under -race.
func TestAppendColumnsConcurrent(t *testing.T) {
	var s chStore
	bench := nativeBenchRows(1000)
	batches := [][]viewcount.Verdict{bench, variedVerdicts(), bench[:13], distinctSites(300)}
	want := make([][]byte, len(batches))
	for i, rows := range batches {
		want[i] = byAppend(t, rows)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 12 {
				k := (g + i) % len(batches)
				got, err := encodeBlock(func(block *proto.Block) error {
					return s.appendColumns(blockBatch{block: block}, batches[k])
				})
				if err == nil {
					err = sameBytes(got, want[k])
				}
				if err != nil {
					t.Errorf("goroutine %d, batch %d: %v", g, k, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestAppendColumnsRefusesOtherTypes: a batch whose column is not of the
// type the encoder writes fails before any column is filled.
func TestAppendColumnsRefusesOtherTypes(t *testing.T) {
	f := func(name, typ string) {
		t.Helper()
		block := proto.NewBlock()
		for _, c := range viewsRawTypes {
			if c[0] == name {
				c[1] = typ
			}
			if err := block.AddColumn(c[0], column.Type(c[1])); err != nil {
				t.Fatal(err)
			}
		}
		err := new(viewsEncoder).appendColumns(blockBatch{block: block}, variedVerdicts())
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s as %s: %v, want an error naming the column", name, typ, err)
		}
		for _, c := range block.Columns {
			if c.Rows() != 0 {
				t.Fatalf("%s as %s: column %s has %d rows, want none", name, typ, c.Name(), c.Rows())
			}
		}
	}
	f("time", "DateTime64(6, 'UTC')")
	f("time", "DateTime('UTC')")
	f("site", "String")
	f("page", "LowCardinality(String)")
	f("verdict", "LowCardinality(Nullable(String))")
	f("screen_w", "UInt32")
	f("visit_set", "UInt8")
	f("d_visits", "UInt8")
	f("scroll_to", "Int16")
}

// FuzzAppendColumns sets the string columns and the times from the fuzzer
// and compares with the driver's Append.
func FuzzAppendColumns(f *testing.F) {
	f.Add("a.example", "", int64(1_700_000_000_123_456_789), uint8(3))
	f.Add("", "ünï\x00\xff", int64(-1), uint8(1))
	f.Add("x", "x", int64(0), uint8(0))
	f.Fuzz(func(t *testing.T, a, b string, nanos int64, n uint8) {
		rows := variedVerdicts()[:2+int(n)%7]
		for i := range rows {
			s := []string{a, b}[i%2]
			r := &rows[i]
			r.Site, r.Page, r.UTM.Source, r.UTM.Campaign, r.Origin, r.Rules = s, s, a, b, s, b
			r.Dims.Browser, r.Visit.EntryRefSource, r.Visit.PrevPage = b, s, a
			r.Time = time.Unix(0, nanos+int64(i))
			r.Visit.ViewTime = time.Unix(0, nanos-int64(i)*1_000_001)
		}
		got, err := byEncoder(new(viewsEncoder), rows)
		if err != nil {
			t.Fatal(err)
		}
		if err := sameBytes(got, byAppend(t, rows)); err != nil {
			t.Fatal(err)
		}
	})
}

// TestEncoderPool: an encoder put back is the one got next, with its
// buffer; the pool keeps at most maxIdleEncoders and no huge buffer.
func TestEncoderPool(t *testing.T) {
	var p encoderPool
	e := p.get()
	e.buf = make([]byte, 0, 1<<20)
	p.put(e)
	if got := p.get(); got != e || cap(got.buf) != 1<<20 {
		t.Fatalf("got %p with a %d-byte buffer, want %p back with its buffer", got, cap(got.buf), e)
	}
	for range maxIdleEncoders + 2 {
		p.put(new(viewsEncoder))
	}
	if len(p.idle) != maxIdleEncoders {
		t.Errorf("%d idle encoders, want %d", len(p.idle), maxIdleEncoders)
	}
	p = encoderPool{}
	p.put(&viewsEncoder{buf: make([]byte, 0, maxKeptBuffer+1)})
	if len(p.idle) != 0 {
		t.Errorf("an encoder with a %d-byte buffer was kept", maxKeptBuffer+1)
	}
}

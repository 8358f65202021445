package store

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
)

// The block layout byte by byte for one row; TestInsertViewsRollups checks
// the same encoding end to end, reading every column back from chDB.
func TestAppendNative(t *testing.T) {
	v := viewcount.Verdict{
		Event: viewcount.Event{
			Time: time.UnixMilli(1_700_000_000_123), Site: "s", Page: "/p", Referrer: "", UA: "ua", ID: "id",
			Visitor: 1, Network: 2, Webdriver: true, Source: viewcount.SourceBeacon, Datacenter: true,
			Hints: viewcount.Hints{Present: true, ScreenW: 0x0780, ScreenH: 0x0438, Languages: 2, UAData: true,
				Window: true, OuterW: 0x0500, OuterH: 0x0300},
		},
		Reason: viewcount.Headless, Partition: 3, Seq: 4, Index: 5, Batch: 6, Rules: "rs1",
	}
	v.UTM = viewcount.UTM{Source: "a", Medium: "b", Campaign: "c"}
	v.Country = "DE"
	v.Dims = viewcount.Dims{RefHost: "h", RefSource: "s", Browser: "B", OS: "O", Device: "d", Screen: "x"}
	v.Headers = viewcount.HeadersSeen | viewcount.HeaderSecure
	v.ASN = 0x01020304
	v.Origin = "o.example"
	v.Kind = viewcount.KindEngagement
	v.Engagement = viewcount.Engagement{EngagedMS: 0x010203, Scroll: 55, AgeMS: 0x0a0b0c}
	v.Visit = viewcount.VisitDelta{Set: true, ViewTime: time.UnixMilli(1_700_000_000_000), VisitStart: time.UnixMilli(1_699_999_990_000),
		EntryPage: "/e", EntryRefHost: "eh", EntryRefSource: "es", EntryUTM: viewcount.UTM{Source: "x", Medium: "y", Campaign: "z"},
		PrevPage: "/q", Visits: 1, Bounces: -1, VisitMS: -2, EngagedMS: 0x01020304, EngagedFrom: -1, EngagedTo: 3, ScrollFrom: 2, ScrollTo: 11}
	got := appendNative(nil, []viewcount.Verdict{v})
	want := []byte{62, 1}
	var names []string
	col := func(name, typ string, value ...byte) {
		names = append(names, name)
		want = appendString(appendString(want, name), typ)
		want = append(want, value...)
	}
	le64 := func(x uint64) []byte { return binary.LittleEndian.AppendUint64(nil, x) }
	col("time", "DateTime64(3, 'UTC')", le64(1_700_000_000_123)...)
	col("site", "String", 1, 's')
	col("page", "String", 2, '/', 'p')
	col("referrer", "String", 0)
	col("ua", "String", 2, 'u', 'a')
	col("event_id", "String", 2, 'i', 'd')
	col("visitor", "UInt64", le64(1)...)
	col("network", "UInt64", le64(2)...)
	col("webdriver", "Bool", 1)
	col("datacenter", "Bool", 1)
	col("hints_present", "Bool", 1)
	col("screen_w", "UInt16", 0x80, 0x07)
	col("screen_h", "UInt16", 0x38, 0x04)
	col("languages", "UInt8", 2)
	col("tz", "Bool", 0)
	col("ua_data", "Bool", 1)
	col("secure_context", "Bool", 0)
	col("source", "String", 6, 'b', 'e', 'a', 'c', 'o', 'n')
	col("verdict", "String", 8, 'h', 'e', 'a', 'd', 'l', 'e', 's', 's')
	col("partition", "UInt16", 3, 0)
	col("seq", "UInt64", le64(4)...)
	col("idx", "UInt32", 5, 0, 0, 0)
	col("utm_source", "String", 1, 'a')
	col("utm_medium", "String", 1, 'b')
	col("utm_campaign", "String", 1, 'c')
	col("country", "String", 2, 'D', 'E')
	col("ref_host", "String", 1, 'h')
	col("ref_source", "String", 1, 's')
	col("browser", "String", 1, 'B')
	col("os", "String", 1, 'O')
	col("device", "String", 1, 'd')
	col("screen", "String", 1, 'x')
	col("batch", "UInt64", le64(6)...)
	col("req_flags", "UInt16", 0x01, 0x01)
	col("asn", "UInt32", 4, 3, 2, 1)
	col("rules", "String", 3, 'r', 's', '1')
	col("window_reported", "Bool", 1)
	col("window_w", "UInt16", 0x00, 0x05)
	col("window_h", "UInt16", 0x00, 0x03)
	col("origin", "String", append([]byte{9}, "o.example"...)...)
	col("kind", "UInt8", 1)
	col("engaged_ms", "UInt32", 3, 2, 1, 0)
	col("scroll", "UInt8", 55)
	col("age_ms", "UInt32", 0x0c, 0x0b, 0x0a, 0)
	col("visit_set", "Bool", 1)
	col("view_time", "DateTime64(3, 'UTC')", le64(1_700_000_000_000)...)
	col("visit_start", "DateTime64(3, 'UTC')", le64(1_699_999_990_000)...)
	col("entry_page", "String", 2, '/', 'e')
	col("entry_ref_host", "String", 2, 'e', 'h')
	col("entry_ref_source", "String", 2, 'e', 's')
	col("entry_utm_source", "String", 1, 'x')
	col("entry_utm_medium", "String", 1, 'y')
	col("entry_utm_campaign", "String", 1, 'z')
	col("prev_page", "String", 2, '/', 'q')
	col("d_visits", "Int8", 1)
	col("d_bounces", "Int8", 0xff)
	col("d_visit_ms", "Int32", 0xfe, 0xff, 0xff, 0xff)
	col("d_engaged_ms", "Int32", 4, 3, 2, 1)
	col("eng_from", "Int8", 0xff)
	col("eng_to", "Int8", 3)
	col("scroll_from", "Int8", 2)
	col("scroll_to", "Int8", 11)
	if string(got) != string(want) {
		t.Errorf("got  %x\nwant %x", got, want)
	}
	// The block's columns are the INSERT's, in its order.
	if got := strings.Join(names, ", "); got != viewsColumns {
		t.Errorf("block columns %q\nINSERT columns %q", got, viewsColumns)
	}
}

func BenchmarkAppendNative(b *testing.B) {
	rows := nativeBenchRows(10_000)
	var buf []byte
	for b.Loop() {
		buf = appendNative(buf[:0], rows)
	}
	b.SetBytes(int64(len(buf)))
	b.ReportMetric(float64(b.N*len(rows))/b.Elapsed().Seconds(), "rows/s")
}

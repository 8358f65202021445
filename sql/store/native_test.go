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
	got := appendNative(nil, []viewcount.Verdict{v})
	want := []byte{40, 1}
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

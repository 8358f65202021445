package store

import (
	"encoding/binary"
	"strings"
	"time"

	"github.com/viewcount/viewcount"
)

// viewsColumns is the column list of every views_raw insert, in the order
// appendNative writes them and the server adapter appends them.
const viewsColumns = "time, site, page, referrer, ua, event_id, visitor, network, webdriver, " +
	"datacenter, hints_present, screen_w, screen_h, languages, tz, ua_data, secure_context, " +
	"source, verdict, partition, seq, idx, " +
	"utm_source, utm_medium, utm_campaign, country, ref_host, ref_source, browser, os, device, screen, batch, " +
	"req_flags, asn, rules, window_reported, window_w, window_h, origin, " +
	"kind, engaged_ms, scroll, age_ms, visit_set, view_time, visit_start, entry_page, entry_ref_host, entry_ref_source, " +
	"entry_utm_source, entry_utm_medium, entry_utm_campaign, prev_page, d_visits, d_bounces, d_visit_ms, d_engaged_ms, " +
	"eng_from, eng_to, scroll_from, scroll_to"

// viewsColumnCount is the number of columns appendNative writes: one per
// name in viewsColumns, in its order.
var viewsColumnCount = strings.Count(viewsColumns, ",") + 1

// appendNative appends rows as one block of ClickHouse's Native format:
// the number of columns and rows, then each column whole (name, type,
// values). The engine reads a column as one array instead of parsing row
// by row, which is cheaper than RowBinary for views_raw
// (docs/benchmarks/history/round-2.md, "What changed in round 2"); the Go
// side costs the same (BenchmarkAppendNative).
//
// Values: fixed-width integers little-endian (signed ones two's
// complement), strings as uvarint length and bytes, DateTime64(3) as Int64
// milliseconds, Bool as one byte. The
// LowCardinality columns (site, source, verdict) are sent as String: the
// engine converts a Native column to the table's type on the way in, and
// building LowCardinality dictionaries here would only move that work.
func appendNative(dst []byte, rows []viewcount.Verdict) []byte {
	dst = binary.AppendUvarint(dst, uint64(viewsColumnCount))
	dst = binary.AppendUvarint(dst, uint64(len(rows)))
	head := func(name, typ string) {
		dst = appendString(appendString(dst, name), typ)
	}
	str := func(name string, v func(*viewcount.Verdict) string) {
		head(name, "String")
		for i := range rows {
			dst = appendString(dst, v(&rows[i]))
		}
	}
	u8 := func(name, typ string, v func(*viewcount.Verdict) uint8) {
		head(name, typ)
		for i := range rows {
			dst = append(dst, v(&rows[i]))
		}
	}
	u16 := func(name string, v func(*viewcount.Verdict) uint16) {
		head(name, "UInt16")
		for i := range rows {
			dst = binary.LittleEndian.AppendUint16(dst, v(&rows[i]))
		}
	}
	u32 := func(name string, v func(*viewcount.Verdict) uint32) {
		head(name, "UInt32")
		for i := range rows {
			dst = binary.LittleEndian.AppendUint32(dst, v(&rows[i]))
		}
	}
	i8 := func(name string, v func(*viewcount.Verdict) int8) {
		head(name, "Int8")
		for i := range rows {
			dst = append(dst, byte(v(&rows[i])))
		}
	}
	i32 := func(name string, v func(*viewcount.Verdict) int32) {
		head(name, "Int32")
		for i := range rows {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(v(&rows[i])))
		}
	}
	u64 := func(name, typ string, v func(*viewcount.Verdict) uint64) {
		head(name, typ)
		for i := range rows {
			dst = binary.LittleEndian.AppendUint64(dst, v(&rows[i]))
		}
	}
	u64("time", "DateTime64(3, 'UTC')", func(r *viewcount.Verdict) uint64 { return uint64(r.Time.UnixMilli()) })
	str("site", func(r *viewcount.Verdict) string { return r.Site })
	str("page", func(r *viewcount.Verdict) string { return r.Page })
	str("referrer", func(r *viewcount.Verdict) string { return r.Referrer })
	str("ua", func(r *viewcount.Verdict) string { return r.UA })
	str("event_id", func(r *viewcount.Verdict) string { return r.ID })
	u64("visitor", "UInt64", func(r *viewcount.Verdict) uint64 { return r.Visitor })
	u64("network", "UInt64", func(r *viewcount.Verdict) uint64 { return r.Network })
	u8("webdriver", "Bool", func(r *viewcount.Verdict) uint8 { return b2u(r.Webdriver) })
	u8("datacenter", "Bool", func(r *viewcount.Verdict) uint8 { return b2u(r.Datacenter) })
	u8("hints_present", "Bool", func(r *viewcount.Verdict) uint8 { return b2u(r.Hints.Present) })
	u16("screen_w", func(r *viewcount.Verdict) uint16 { return r.Hints.ScreenW })
	u16("screen_h", func(r *viewcount.Verdict) uint16 { return r.Hints.ScreenH })
	u8("languages", "UInt8", func(r *viewcount.Verdict) uint8 { return r.Hints.Languages })
	u8("tz", "Bool", func(r *viewcount.Verdict) uint8 { return b2u(r.Hints.TZ) })
	u8("ua_data", "Bool", func(r *viewcount.Verdict) uint8 { return b2u(r.Hints.UAData) })
	u8("secure_context", "Bool", func(r *viewcount.Verdict) uint8 { return b2u(r.Hints.Secure) })
	str("source", func(r *viewcount.Verdict) string { return r.Source.String() })
	str("verdict", func(r *viewcount.Verdict) string { return string(r.Reason) })
	u16("partition", func(r *viewcount.Verdict) uint16 { return r.Partition })
	u64("seq", "UInt64", func(r *viewcount.Verdict) uint64 { return r.Seq })
	u32("idx", func(r *viewcount.Verdict) uint32 { return r.Index })
	str("utm_source", func(r *viewcount.Verdict) string { return r.UTM.Source })
	str("utm_medium", func(r *viewcount.Verdict) string { return r.UTM.Medium })
	str("utm_campaign", func(r *viewcount.Verdict) string { return r.UTM.Campaign })
	str("country", func(r *viewcount.Verdict) string { return r.Country })
	str("ref_host", func(r *viewcount.Verdict) string { return r.Dims.RefHost })
	str("ref_source", func(r *viewcount.Verdict) string { return r.Dims.RefSource })
	str("browser", func(r *viewcount.Verdict) string { return r.Dims.Browser })
	str("os", func(r *viewcount.Verdict) string { return r.Dims.OS })
	str("device", func(r *viewcount.Verdict) string { return r.Dims.Device })
	str("screen", func(r *viewcount.Verdict) string { return r.Dims.Screen })
	u64("batch", "UInt64", func(r *viewcount.Verdict) uint64 { return r.Batch })
	u16("req_flags", func(r *viewcount.Verdict) uint16 { return uint16(r.Headers) })
	u32("asn", func(r *viewcount.Verdict) uint32 { return r.ASN })
	str("rules", func(r *viewcount.Verdict) string { return r.Rules })
	u8("window_reported", "Bool", func(r *viewcount.Verdict) uint8 { return b2u(r.Hints.Window) })
	u16("window_w", func(r *viewcount.Verdict) uint16 { return r.Hints.OuterW })
	u16("window_h", func(r *viewcount.Verdict) uint16 { return r.Hints.OuterH })
	str("origin", func(r *viewcount.Verdict) string { return r.Origin })
	u8("kind", "UInt8", func(r *viewcount.Verdict) uint8 { return uint8(r.Kind) })
	u32("engaged_ms", func(r *viewcount.Verdict) uint32 { return r.Engagement.EngagedMS })
	u8("scroll", "UInt8", func(r *viewcount.Verdict) uint8 { return r.Engagement.Scroll })
	u32("age_ms", func(r *viewcount.Verdict) uint32 { return r.Engagement.AgeMS })
	u8("visit_set", "Bool", func(r *viewcount.Verdict) uint8 { return b2u(r.Visit.Set) })
	u64("view_time", "DateTime64(3, 'UTC')", func(r *viewcount.Verdict) uint64 { return visitMilli(r.Visit.ViewTime) })
	u64("visit_start", "DateTime64(3, 'UTC')", func(r *viewcount.Verdict) uint64 { return visitMilli(r.Visit.VisitStart) })
	str("entry_page", func(r *viewcount.Verdict) string { return r.Visit.EntryPage })
	str("entry_ref_host", func(r *viewcount.Verdict) string { return r.Visit.EntryRefHost })
	str("entry_ref_source", func(r *viewcount.Verdict) string { return r.Visit.EntryRefSource })
	str("entry_utm_source", func(r *viewcount.Verdict) string { return r.Visit.EntryUTM.Source })
	str("entry_utm_medium", func(r *viewcount.Verdict) string { return r.Visit.EntryUTM.Medium })
	str("entry_utm_campaign", func(r *viewcount.Verdict) string { return r.Visit.EntryUTM.Campaign })
	str("prev_page", func(r *viewcount.Verdict) string { return r.Visit.PrevPage })
	i8("d_visits", func(r *viewcount.Verdict) int8 { return r.Visit.Visits })
	i8("d_bounces", func(r *viewcount.Verdict) int8 { return r.Visit.Bounces })
	i32("d_visit_ms", func(r *viewcount.Verdict) int32 { return r.Visit.VisitMS })
	i32("d_engaged_ms", func(r *viewcount.Verdict) int32 { return r.Visit.EngagedMS })
	i8("eng_from", func(r *viewcount.Verdict) int8 { return visitBucket(&r.Visit, r.Visit.EngagedFrom) })
	i8("eng_to", func(r *viewcount.Verdict) int8 { return visitBucket(&r.Visit, r.Visit.EngagedTo) })
	i8("scroll_from", func(r *viewcount.Verdict) int8 { return visitBucket(&r.Visit, r.Visit.ScrollFrom) })
	i8("scroll_to", func(r *viewcount.Verdict) int8 { return visitBucket(&r.Visit, r.Visit.ScrollTo) })
	return dst
}

// visitMilli is a VisitDelta time as views_raw's DateTime64(3) holds it:
// the zero time (a verdict the visit stage did not decide) is the
// column's default, 0, not year 1, which DateTime64 cannot hold.
func visitMilli(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixMilli())
}

// visitBucket is a VisitDelta bucket as views_raw holds it: -1 (none, the
// columns' default) unless the visit stage decided the verdict, whose zero
// VisitDelta would otherwise read as bucket 0.
func visitBucket(v *viewcount.VisitDelta, b int8) int8 {
	if !v.Set {
		return -1
	}
	return b
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

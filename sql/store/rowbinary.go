package store

import (
	"encoding/binary"

	"github.com/viewcount/viewcount"
)

// viewsColumns is the column list of every views_raw insert, in the order
// appendRowBinary writes them and the server adapter appends them.
const viewsColumns = "time, site, page, referrer, ua, event_id, visitor, network, webdriver, " +
	"datacenter, hints_present, screen_w, screen_h, languages, tz, ua_data, secure_context, " +
	"source, verdict, partition, seq, idx"

// appendRowBinary appends rows in ClickHouse's RowBinary format for
// viewsColumns: fixed-width integers little-endian, strings (LowCardinality
// included) as uvarint length and bytes, DateTime64(3) as Int64 milliseconds,
// Bool as one byte.
func appendRowBinary(dst []byte, rows []viewcount.Verdict) []byte {
	for i := range rows {
		r := &rows[i]
		dst = binary.LittleEndian.AppendUint64(dst, uint64(r.Time.UnixMilli()))
		dst = appendString(dst, r.Site)
		dst = appendString(dst, r.Page)
		dst = appendString(dst, r.Referrer)
		dst = appendString(dst, r.UA)
		dst = appendString(dst, r.ID)
		dst = binary.LittleEndian.AppendUint64(dst, r.Visitor)
		dst = binary.LittleEndian.AppendUint64(dst, r.Network)
		h := &r.Hints
		dst = append(dst, b2u(r.Webdriver), b2u(r.Datacenter), b2u(h.Present))
		dst = binary.LittleEndian.AppendUint16(dst, h.ScreenW)
		dst = binary.LittleEndian.AppendUint16(dst, h.ScreenH)
		dst = append(dst, h.Languages, b2u(h.TZ), b2u(h.UAData), b2u(h.Secure))
		dst = appendString(dst, r.Source.String())
		dst = appendString(dst, string(r.Reason))
		dst = binary.LittleEndian.AppendUint16(dst, r.Partition)
		dst = binary.LittleEndian.AppendUint64(dst, r.Seq)
		dst = binary.LittleEndian.AppendUint32(dst, r.Index)
	}
	return dst
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

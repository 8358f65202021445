package store

import (
	"encoding/binary"

	"github.com/viewcount/viewcount"
)

// viewsColumns is the column list of every views_raw insert, in the order
// appendRowBinary writes them and the server adapter appends them.
const viewsColumns = "time, site, page, referrer, ua, event_id, visitor, network, webdriver, source, verdict, partition, seq, idx"

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
		if r.Webdriver {
			dst = append(dst, 1)
		} else {
			dst = append(dst, 0)
		}
		dst = appendString(dst, r.Source.String())
		dst = appendString(dst, string(r.Reason))
		dst = binary.LittleEndian.AppendUint16(dst, r.Partition)
		dst = binary.LittleEndian.AppendUint64(dst, r.Seq)
		dst = binary.LittleEndian.AppendUint32(dst, r.Index)
	}
	return dst
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

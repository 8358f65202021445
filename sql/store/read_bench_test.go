package store_test

import (
	"testing"

	"github.com/viewcount/viewcount/sql/store/storetest"
)

// benchRows is a revalidation page's shape: 20,000 events of 15 columns.
const benchRows = `SELECT number AS seq, toUInt32(number % 100) AS idx, toInt64(number * 1000) AS time_ms, 'a.example' AS site, concat('/page/', toString(number % 500)) AS page, 'https://ref.example/' AS referrer, 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36' AS ua, toString(number) AS event_id, number * 7919 AS visitor, number * 104729 AS network, toUInt8(number % 2) AS webdriver, toUInt16(1920) AS screen_w, toUInt16(1080) AS screen_h, 'DE' AS country, toUInt32(3320) AS asn FROM numbers(20000)`

// BenchmarkQueryRead runs a query of 20,000 rows and reads every cell of
// it typed, by name: the engine's output decoded and read, as a
// revalidation reads views_raw a page at a time.
func BenchmarkQueryRead(b *testing.B) {
	s := storetest.Open(b)
	b.ReportAllocs()
	for range b.N {
		res, err := s.Query(b.Context(), benchRows, nil)
		if err != nil {
			b.Fatal(err)
		}
		var sum uint64
		for res.Next() {
			sum += res.Uint64("seq") + uint64(res.Uint32("idx")) + uint64(res.Int64("time_ms")) + uint64(len(res.String("site"))) +
				uint64(len(res.String("page"))) + uint64(len(res.String("referrer"))) + uint64(len(res.String("ua"))) +
				uint64(len(res.String("event_id"))) + res.Uint64("visitor") + res.Uint64("network") + res.Uint64("webdriver") +
				uint64(res.Uint16("screen_w")) + uint64(res.Uint16("screen_h")) + uint64(len(res.String("country"))) + uint64(res.Uint32("asn"))
		}
		if err := res.Err(); err != nil || sum == 0 {
			b.Fatal(err)
		}
	}
}

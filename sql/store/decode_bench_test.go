package store

import (
	"context"
	"strconv"
	"testing"
)

// benchDecodeQuery is BenchmarkQueryRead's shape (a revalidation page:
// 20,000 events), here read from output captured once, so the figure is
// the Go side alone: decode and read every cell, typed, by name.
const benchDecodeQuery = `SELECT number AS seq, toUInt32(number % 100) AS idx, toInt64(number * 1000) AS time_ms, 'a.example' AS site,
	concat('/page/', toString(number % 500)) AS page, 'https://ref.example/' AS referrer,
	'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36' AS ua,
	toString(number) AS event_id, number * 7919 AS visitor, number * 104729 AS network, toUInt8(number % 2) AS webdriver,
	toUInt16(1920) AS screen_w, toUInt16(1080) AS screen_h, 'DE' AS country, toUInt32(3320) AS asn FROM numbers(20000)`

func captureOutput(b *testing.B, format string) []byte {
	s, err := Open(context.Background(), Config{DataDir: b.TempDir()}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	cs := s.(*chdbStore)
	c := <-cs.queries
	defer func() { cs.queries <- c }()
	out, _, err := cs.run(c, benchDecodeQuery, format, nil)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkDecodeNative: Query's Go side today.
func BenchmarkDecodeNative(b *testing.B) {
	out := captureOutput(b, "Native")
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		res, err := decodeNative(out)
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
		if res.Err() != nil || sum == 0 {
			b.Fatal(res.Err())
		}
	}
}

// BenchmarkDecodeTSV: the Go side before typed results, for comparison:
// TSVWithNames parsed to text cells, read by position with strconv.
func BenchmarkDecodeTSV(b *testing.B) {
	out := captureOutput(b, "TSVWithNames")
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		res, err := parseTSVWithNames(out)
		if err != nil {
			b.Fatal(err)
		}
		var sum uint64
		var errs error
		u := func(c string, bits int) uint64 {
			v, err := strconv.ParseUint(c, 10, bits)
			if err != nil {
				errs = err
			}
			return v
		}
		for _, r := range res.Rows {
			t, err := strconv.ParseInt(r[2], 10, 64)
			if err != nil {
				errs = err
			}
			sum += u(r[0], 64) + u(r[1], 32) + uint64(t) + uint64(len(r[3])+len(r[4])+len(r[5])+len(r[6])+len(r[7])) +
				u(r[8], 64) + u(r[9], 64) + u(r[10], 8) + u(r[11], 16) + u(r[12], 16) + uint64(len(r[13])) + u(r[14], 32)
		}
		if errs != nil || sum == 0 {
			b.Fatal(errs)
		}
	}
}

package analyst

import (
	"os"
	"testing"
)

// BenchmarkCheck is the checks' cost for one query: lexing, parsing, the
// allow-lists and printing, on a worked example (sql/examples) and on a
// short query.
func BenchmarkCheck(b *testing.B) {
	ex, err := os.ReadFile("../examples/invalid_by_reason_day.sql")
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, q string }{
		{"example", string(ex)},
		{"short", "SELECT page, count() FROM views_raw WHERE site = {site:String} GROUP BY page ORDER BY 2 DESC LIMIT 10"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.q)))
			for b.Loop() {
				if _, err := Check(c.q, testPolicy); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package sqlhttp_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkQuery is one small analyst query through the endpoint: HTTP,
// token check (a KV read), the parser and analyzer checks (two EXPLAINs)
// and the query itself.
func BenchmarkQuery(b *testing.B) {
	f := setupB(b)
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPost, f.url+"/", strings.NewReader("SELECT page, count() FROM views_raw GROUP BY page ORDER BY page"))
		req.SetBasicAuth("b", f.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatal(resp.Status)
		}
	}
}

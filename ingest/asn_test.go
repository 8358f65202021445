package ingest

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/ingest/asn"
)

// openASN opens the AS-number data serve uses by default; missing is a
// failure, since `make test` fetches it.
func openASN(t testing.TB) *asn.DB {
	t.Helper()
	dir := asn.DefaultPath()
	if _, err := os.Stat(filepath.Join(dir, asn.FileIPv4)); err != nil {
		t.Fatalf("AS-number data missing (%v): run `make asn`", err)
	}
	db, err := asn.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// TestASNRecorded: the client address's AS number is on the event, the
// address is not.
func TestASNRecorded(t *testing.T) {
	pub := newRecorder(t)
	gin.SetMode(gin.TestMode)
	e := gin.New()
	cfg := Config{PublishTimeout: time.Second, ASNs: openASN(t)}
	New(cfg, pub, fixedSalt(t, testSalt), viewcount.NewMetrics(), slog.New(slog.DiscardHandler), func() time.Time { return testNow }).Routes(e)
	for _, ip := range []string{"8.8.8.8", "[2001:4860:4860::8888]", "10.9.8.7", "1.1.1.1"} {
		req := httptest.NewRequest(http.MethodGet, "/p.gif?site=example.com&page=/", nil)
		req.RemoteAddr = ip + ":40000"
		req.Header.Set("User-Agent", chromeUA)
		w := httptest.NewRecorder()
		e.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			t.Fatalf("%s: status %d", ip, w.Code)
		}
	}
	var got []uint32
	for _, ev := range pub.events() {
		got = append(got, ev.ASN)
	}
	if want := []uint32{15169, 15169, 0, 13335}; !slices.Equal(got, want) {
		t.Fatalf("ASNs %v, want %v", got, want)
	}
}

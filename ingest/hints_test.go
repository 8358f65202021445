package ingest

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/viewcount/viewcount"
)

// TestHintsAndDatacenter checks the two signals ingest adds for the
// validators: the beacon's browser hints and the datacenter flag, which is
// decided from the IP before the IP is dropped.
func TestHintsAndDatacenter(t *testing.T) {
	gin.SetMode(gin.TestMode)
	rec := newRecorder(t)
	dc := NewRanges([]netip.Prefix{netip.MustParsePrefix("34.64.0.0/10")})
	e := gin.New()
	New(Config{Datacenter: dc}, rec, fixedSalt(t, testSalt), viewcount.NewMetrics(), slog.New(slog.NewTextHandler(io.Discard, nil)), func() time.Time { return testNow }).Routes(e)
	send := func(ip, body string) int {
		req := httptest.NewRequest(http.MethodPost, "/v1/events", strings.NewReader(body))
		req.Header.Set("Content-Type", "text/plain")
		req.Header.Set("User-Agent", chromeUA)
		req.RemoteAddr = ip + ":5555"
		w := httptest.NewRecorder()
		e.ServeHTTP(w, req)
		return w.Code
	}
	if c := send("34.66.1.2", `{"site":"a.example","page":"/","hints":{"sw":1920,"sh":1080,"lang":2,"tz":true,"uad":true,"sec":true}}`); c != 202 {
		t.Fatalf("status %d", c)
	}
	if c := send("81.2.69.160", `{"site":"a.example","page":"/","hints":{"sw":-5,"sh":99999,"lang":1000}}`); c != 202 {
		t.Fatalf("status %d", c)
	}
	if c := send("81.2.69.160", `{"site":"a.example","page":"/"}`); c != 202 {
		t.Fatalf("status %d", c)
	}
	if c := send("81.2.69.160", `{"site":"a.example","page":"/","hints":{"sw":"wide"}}`); c != 400 {
		t.Fatalf("bad hint type: status %d, want 400", c)
	}
	evs := rec.events()
	if len(evs) != 3 {
		t.Fatalf("%d events", len(evs))
	}
	want := []struct {
		dc    bool
		hints viewcount.Hints
	}{
		{true, viewcount.Hints{Present: true, ScreenW: 1920, ScreenH: 1080, Languages: 2, TZ: true, UAData: true, Secure: true}},
		{false, viewcount.Hints{Present: true, ScreenW: 0, ScreenH: 65535, Languages: 255}},
		{false, viewcount.Hints{}},
	}
	for i, w := range want {
		if evs[i].Datacenter != w.dc || evs[i].Hints != w.hints {
			t.Errorf("event %d: datacenter %v hints %+v; want %v %+v", i, evs[i].Datacenter, evs[i].Hints, w.dc, w.hints)
		}
		// The encoded message carries the same facts.
		back, err := viewcount.DecodeEvents(nil, viewcount.AppendEvents(nil, evs[i:i+1]))
		if err != nil || back[0].Hints != evs[i].Hints || back[0].Datacenter != evs[i].Datacenter {
			t.Errorf("event %d does not survive the codec: %v", i, err)
		}
	}
	// One network, one partition: visitors of a /24 share the low 32 bits.
	if uint32(evs[1].Visitor) != uint32(evs[1].Network) {
		t.Error("visitor id does not carry the network's partition key")
	}
}

package ingest

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/ingest/geo"
)

func TestCountryCode(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := CountryCode(in); got != want {
			t.Errorf("CountryCode(%q) = %q, want %q", in, got, want)
		}
	}
	f("DE", "DE")
	f("de", "DE")
	f("uS", "US")
	f("XX", "") // Cloudflare: no country known
	f("xx", "")
	f("T1", "") // Cloudflare: Tor
	f("ZZ", "")
	f("", "")
	f("D", "")
	f("DEU", "")
	f(" DE", "")
	f("D1", "")
	f("Ü", "") // two bytes, not two letters
}

// openGeo opens the country database serve uses by default; missing is a
// failure, since `make test` fetches it.
func openGeo(t testing.TB) *geo.DB {
	t.Helper()
	path := geo.DefaultPath()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("country database missing (%v): run `make geo`", err)
	}
	db, err := geo.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// TestCountryFromHeaderAndDB: the operator's CDN header decides when it
// names a country, the database otherwise; the UTM tags of the page travel
// too, for the pixel and the beacon alike.
func TestCountryFromHeaderAndDB(t *testing.T) {
	pub := newRecorder(t)
	gin.SetMode(gin.TestMode)
	e := gin.New()
	cfg := Config{PublishTimeout: time.Second, CountryHeader: "CF-IPCountry", Countries: openGeo(t)}
	New(cfg, pub, fixedSalt(t, testSalt), viewcount.NewMetrics(), slog.New(slog.DiscardHandler), func() time.Time { return testNow }).Routes(e)

	send := func(req *http.Request, ip, header string) {
		t.Helper()
		req.RemoteAddr = ip + ":40000"
		req.Header.Set("User-Agent", chromeUA)
		if header != "" {
			req.Header.Set("CF-IPCountry", header)
		}
		w := httptest.NewRecorder()
		e.ServeHTTP(w, req)
		if w.Code != http.StatusOK && w.Code != http.StatusAccepted {
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
	pixel := func(ip, header string) {
		t.Helper()
		send(httptest.NewRequest(http.MethodGet, "/p.gif?site=example.com&page=%2Fa%3Futm_source%3DNews", nil), ip, header)
	}
	pixel(testIP, "de")     // the header: DE
	pixel("8.8.8.8", "XX")  // the CDN does not know: the database says US
	pixel("8.8.8.8", "")    // no header: the database
	pixel("10.9.8.7", "T1") // Tor, and a private address the database does not know
	pixel("8.8.8.8", "FR")  // the header wins over the database
	pixel("::1", "")        // loopback: unknown
	beacon := httptest.NewRequest(http.MethodPost, "/v1/events",
		strings.NewReader(`{"site":"example.com","page":"/b?utm_campaign=Launch&utm_medium=social","hints":{"sw":390}}`))
	beacon.Header.Set("Content-Type", "text/plain")
	send(beacon, "193.99.144.80", "")

	evs := pub.events()
	var got []string
	for _, ev := range evs {
		got = append(got, ev.Country)
	}
	if want := []string{"DE", "US", "US", "", "FR", "", "DE"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("countries %q, want %q", got, want)
	}
	if evs[0].UTM != (viewcount.UTM{Source: "news"}) || evs[0].Page != "/a" {
		t.Errorf("pixel: page %q, UTM %+v", evs[0].Page, evs[0].UTM)
	}
	if last := evs[len(evs)-1]; last.UTM != (viewcount.UTM{Medium: "social", Campaign: "launch"}) || last.Page != "/b" {
		t.Errorf("beacon: page %q, UTM %+v", last.Page, last.UTM)
	}
}

// BenchmarkPixelCountry is BenchmarkPixel with the country looked up in the
// default database (no CDN header): the cost a hit pays for its country.
func BenchmarkPixelCountry(b *testing.B) {
	gin.SetMode(gin.TestMode)
	e := gin.New()
	if err := e.SetTrustedProxies(nil); err != nil { // as newTestServer: no X-Forwarded-For parsing
		b.Fatal(err)
	}
	cfg := Config{PublishTimeout: time.Second, Countries: openGeo(b)}
	New(cfg, nopPublisher{}, fixedSalt(b, testSalt), viewcount.NewMetrics(), slog.New(slog.DiscardHandler), time.Now).Routes(e)
	req := httptest.NewRequest(http.MethodGet,
		"/p.gif?site=example.com&page=%2Fblog%2F2026%2Fsome-post%2F%3Futm_source%3Dnews&ref=https%3A%2F%2Fwww.google.com%2F", nil)
	req.RemoteAddr = "193.99.144.80:40000"
	req.Header.Set("User-Agent", chromeUA)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		e.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}

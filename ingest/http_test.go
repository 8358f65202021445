package ingest

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"image/gif"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/httpserve"
	"github.com/viewcount/viewcount/internal/latency"
	"github.com/viewcount/viewcount/internal/stream/streamtest"
)

const testIP = "203.0.113.77"

var testNow = time.Date(2026, 3, 1, 10, 0, 0, 123456789, time.UTC)

// recorder is the real publishing path (a Publisher on an in-process
// JetStream server) that also reads back what the stream holds; reqs counts
// Publish calls, so tests can assert a rejected request published nothing.
type recorder struct {
	pub  *Publisher
	js   jetstream.JetStream
	mu   sync.Mutex
	reqs int
	t    testing.TB
}

func newRecorder(t testing.TB) *recorder {
	c := streamtest.Open(t, 4)
	return &recorder{pub: runPublisher(t, c.JS, 4, viewcount.NewMetrics()), js: c.JS, t: t}
}

func (r *recorder) Publish(ctx context.Context, evs []viewcount.Event) (viewcount.StreamPosition, error) {
	r.mu.Lock()
	r.reqs++
	r.mu.Unlock()
	return r.pub.Publish(ctx, evs)
}

// events returns every event in the stream, in stream order.
func (r *recorder) events() []viewcount.Event {
	var out []viewcount.Event
	for _, m := range readStream(r.t, r.js) {
		out = append(out, m.Events...)
	}
	return out
}

// downPublisher is a real Publisher whose server has stopped: every Publish
// fails with ErrUnavailable.
func downPublisher(t testing.TB) EventPublisher {
	c := streamtest.Open(t, 4)
	p := runPublisher(t, c.JS, 4, viewcount.NewMetrics())
	c.Close()
	return p
}

// fixedSalt is the real salt store on its own bucket, whose random source
// yields salt for the first day asked.
func fixedSalt(t testing.TB, salt []byte) SaltSource {
	c := streamtest.Open(t, 1)
	kv, err := c.KV(context.Background(), viewcount.BucketSalts)
	if err != nil {
		t.Fatal(err)
	}
	return NewSalts(kv, &countingRandom{next: salt[0]}, discard())
}

// downSalts is the real salt store with its server stopped.
func downSalts(t testing.TB) SaltSource {
	c := streamtest.Open(t, 1)
	kv, err := c.KV(context.Background(), viewcount.BucketSalts)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	return NewSalts(kv, &countingRandom{next: 1}, discard())
}

// testServer is a gin engine in test mode with the ingest routes; logs go
// to logs, at debug level, so tests can check what is never logged.
type testServer struct {
	engine  *gin.Engine
	metrics *viewcount.Metrics
	logs    *bytes.Buffer
}

func newTestServer(t testing.TB, pub EventPublisher, salts SaltSource, now func() time.Time, trustedProxies []string) *testServer {
	t.Helper()
	gin.SetMode(gin.TestMode)
	e := gin.New()
	if err := e.SetTrustedProxies(trustedProxies); err != nil {
		t.Fatal(err)
	}
	logs := &bytes.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	m := viewcount.NewMetricsWith(latency.New())
	// The request timing every engine runs (httpserve.NewEngine), so
	// BenchmarkPixel pays for it as the service does.
	e.Use(httpserve.ObserveRequests(m))
	New(Config{PublishTimeout: time.Second}, pub, salts, m, logger, now).Routes(e)
	return &testServer{engine: e, metrics: m, logs: logs}
}

func (s *testServer) do(req *http.Request) *httptest.ResponseRecorder {
	if req.RemoteAddr == "192.0.2.1:1234" { // httptest's default
		req.RemoteAddr = testIP + ":40000"
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", chromeUA)
	}
	w := httptest.NewRecorder()
	s.engine.ServeHTTP(w, req)
	return w
}

func (s *testServer) pixel(query string) *httptest.ResponseRecorder {
	return s.do(httptest.NewRequest(http.MethodGet, "/p.gif?"+query, nil))
}

func (s *testServer) beacon(contentType, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/v1/events", strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return s.do(req)
}

// noLeaks asserts that neither the client IP nor the full UA was logged.
func (s *testServer) noLeaks(t *testing.T) {
	t.Helper()
	if logs := s.logs.String(); strings.Contains(logs, testIP) || strings.Contains(logs, chromeUA) {
		t.Fatalf("IP or UA in the logs:\n%s", logs)
	}
}

func checkGIF(t *testing.T, w *httptest.ResponseRecorder, status int) {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d, want %d", w.Code, status)
	}
	if ct := w.Header().Get("Content-Type"); ct != "image/gif" {
		t.Fatalf("Content-Type %q", ct)
	}
	if cc := w.Header().Get("Cache-Control"); cc != "no-store" {
		t.Fatalf("Cache-Control %q", cc)
	}
	if body := w.Body.Bytes(); len(body) != 43 || !bytes.Equal(body, pixelGIF) {
		t.Fatalf("body is %d bytes, want the 43-byte GIF", len(body))
	}
}

func TestPixelGIFDecodes(t *testing.T) {
	img, err := gif.Decode(bytes.NewReader(pixelGIF))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 1 || b.Dy() != 1 {
		t.Fatalf("bounds %v", b)
	}
	if _, _, _, a := img.At(0, 0).RGBA(); a != 0 {
		t.Fatal("pixel not transparent")
	}
}

// TestPixelDurable runs the whole path: pixel → Handler → Publisher → real
// JetStream, with the salt from the real bucket.
func TestPixelDurable(t *testing.T) {
	c := streamtest.Open(t, 4)
	m := viewcount.NewMetrics()
	pub := runPublisher(t, c.JS, 4, m)
	kv, err := c.KV(context.Background(), viewcount.BucketSalts)
	if err != nil {
		t.Fatal(err)
	}
	salts := NewSalts(kv, &countingRandom{next: 1}, discard())
	srv := newTestServer(t, pub, salts, func() time.Time { return testNow }, nil)

	q := url.Values{"site": {"Example.COM"}, "page": {"/blog/post/?utm_source=x"}, "ref": {"https://news.test/a?q=1"}, "wd": {"1"}}
	checkGIF(t, srv.pixel(q.Encode()), http.StatusOK)

	msgs := readStream(t, c.JS)
	if len(msgs) != 1 || len(msgs[0].Events) != 1 {
		t.Fatalf("stream has %d messages", len(msgs))
	}
	e := msgs[0].Events[0]
	salt := bytes.Repeat([]byte{1}, SaltLen)
	want := viewcount.Event{
		Time: testNow.Truncate(time.Millisecond), Site: "example.com", Page: "/blog/post",
		Referrer: "https://news.test/a", UA: chromeUA, ID: e.ID,
		Visitor:   VisitorID(salt, "example.com", testIP, chromeUA),
		Network:   NetworkID(salt, netip.MustParseAddr(testIP)),
		Webdriver: true, Source: viewcount.SourcePixel, UTM: viewcount.UTM{Source: "x"},
		Headers: viewcount.HeadersSeen, // a bare request: none of a browser's headers
	}
	if e != want {
		t.Fatalf("event\n got %+v\nwant %+v", e, want)
	}
	if len(e.ID) != 32 {
		t.Fatalf("generated id %q", e.ID)
	}
	if want := viewcount.Subject(viewcount.Partition(e.Visitor, 4)); msgs[0].Subject != want {
		t.Fatalf("subject %s, want %s", msgs[0].Subject, want)
	}
	// The raw IP appears nowhere in what was stored: not as text, not as
	// IPv4 bytes, not as IPv4-mapped IPv6 bytes, not even its /24.
	addr := netip.MustParseAddr(testIP)
	v4, v6 := addr.As4(), netip.AddrFrom4(addr.As4()).As16()
	for _, needle := range [][]byte{[]byte(testIP), []byte("203.0.113."), v4[:], v6[:]} {
		if bytes.Contains(msgs[0].Data, needle) || strings.Contains(msgs[0].MsgID, string(needle)) {
			t.Fatalf("message contains the client IP (%q)", needle)
		}
	}
	if m.Published.Load() != 1 || srv.metrics.Received.Load() != 1 {
		t.Fatalf("published %d, received %d", m.Published.Load(), srv.metrics.Received.Load())
	}
	srv.noLeaks(t)
}

func TestPixelBadInput(t *testing.T) {
	pub := newRecorder(t)
	srv := newTestServer(t, pub, fixedSalt(t, testSalt), func() time.Time { return testNow }, nil)
	f := func(query string) {
		t.Helper()
		checkGIF(t, srv.pixel(query), http.StatusBadRequest)
	}
	f("")
	f("page=/a")                               // no site
	f("site=&page=/a")                         // empty site
	f("site=not+a+domain&page=/a")             // bad site
	f("site=example.com")                      // no page
	f("site=example.com&page=/a%00b")          // control character
	f("site=example.com&page=%2Fa%C3")         // invalid UTF-8
	f("site=example.com&page=/a&id=caf%C3%A9") // id not ASCII
	f("site=example.com&page=/a&id=" + strings.Repeat("x", MaxIDLen+1))
	if pub.reqs != 0 {
		t.Fatalf("%d publishes for bad hits", pub.reqs)
	}
	if got := srv.metrics.BadRequests.Load(); got != 9 {
		t.Fatalf("BadRequests = %d, want 9", got)
	}
	// The edge of the id rules is accepted.
	checkGIF(t, srv.pixel("site=example.com&page=/a&id="+strings.Repeat("x", MaxIDLen)), http.StatusOK)
	if evs := pub.events(); len(evs) != 1 || evs[0].ID != strings.Repeat("x", MaxIDLen) {
		t.Fatalf("client id not kept: %+v", evs)
	}
	srv.noLeaks(t)
}

func TestPixelNotDurable(t *testing.T) {
	f := func(pub EventPublisher, salts SaltSource) *testServer {
		t.Helper()
		srv := newTestServer(t, pub, salts, func() time.Time { return testNow }, nil)
		checkGIF(t, srv.pixel("site=example.com&page=/a"), http.StatusServiceUnavailable)
		if srv.metrics.BadRequests.Load() != 0 {
			t.Fatal("an outage counted as a bad request")
		}
		srv.noLeaks(t)
		return srv
	}
	f(downPublisher(t), fixedSalt(t, testSalt))
	// A salt outage never reaches the publisher; its 503 is counted all the same.
	if srv := f(newRecorder(t), downSalts(t)); srv.metrics.PublishErrors.Load() != 1 {
		t.Errorf("salt outage: PublishErrors = %d, want 1", srv.metrics.PublishErrors.Load())
	}
}

func TestBeacon(t *testing.T) {
	pub := newRecorder(t)
	srv := newTestServer(t, pub, fixedSalt(t, testSalt), func() time.Time { return testNow }, nil)
	ok := `{"site":"example.com","page":"/a"}`
	arr := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat(ok+",", n), ",") + "]" }
	f := func(contentType, body string, status int, wantBody string) {
		t.Helper()
		before := pub.reqs
		w := srv.beacon(contentType, body)
		if status == http.StatusAccepted {
			// Where the events are: the stream's last message.
			msgs := readStream(t, pub.js)
			last := msgs[len(msgs)-1]
			wantBody = strings.TrimSuffix(wantBody, "}") + `,"position":"` +
				strings.TrimPrefix(last.Subject, viewcount.SubjectPrefix) + ":" + strconv.FormatUint(last.Seq, 10) + `"}`
		}
		if w.Code != status || w.Body.String() != wantBody {
			t.Fatalf("%s %.60q:\n got %d %s\nwant %d %s", contentType, body, w.Code, w.Body, status, wantBody)
		}
		if status != http.StatusAccepted && pub.reqs != before {
			t.Fatalf("rejected request was published")
		}
	}
	const js = "application/json"
	f(js, ok, 202, `{"accepted":1}`)
	f("text/plain;charset=UTF-8", ok, 202, `{"accepted":1}`) // what sendBeacon sends
	f("Application/JSON; charset=utf-8", ok, 202, `{"accepted":1}`)
	f(js, arr(3), 202, `{"accepted":3}`)
	f(js, arr(100), 202, `{"accepted":100}`)
	f(js, ` [`+ok+`] `, 202, `{"accepted":1}`)
	f(js, `{"site":"example.com","page":"/a","extra":{"x":[1,2]},"webdriver":true}`, 202, `{"accepted":1}`)

	f(js, arr(101), 400, `{"error":"events: 101 events, at most 100 per request"}`)
	f(js, `[]`, 400, `{"error":"events: empty array"}`)
	f(js, ``, 400, `{"error":"empty body: want a JSON object or array"}`)
	f(js, `"x"`, 400, `{"error":"body must be a JSON object or array"}`)
	f(js, `{"site":"example.com",`, 400, `{"error":"malformed JSON: unexpected end of JSON input"}`)
	f(js, `[`+ok+`,`+ok+`,`+ok+`,{"site":"example.com"}]`, 400, `{"error":"events[3].page: required"}`)
	f(js, `{"page":"/a"}`, 400, `{"error":"site: required"}`)
	f(js, `{"site":"a b","page":"/a"}`, 400, `{"error":"site: not a domain name"}`)
	f(js, `{"site":5,"page":"/a"}`, 400, `{"error":"site: must be a string"}`)
	f(js, `[`+ok+`,{"site":"example.com","page":"/a","webdriver":"yes"}]`, 400, `{"error":"events[1].webdriver: must be a boolean"}`)
	f(js, `[`+ok+`,1]`, 400, `{"error":"events[1]: must be an object"}`)
	f(js, `{"site":"example.com","page":"/a\u0000"}`, 400, `{"error":"page: control character"}`)
	f(js, `{"site":"example.com","page":"/a","id":"é"}`, 400, `{"error":"id: must be printable ASCII"}`)

	f("application/xml", ok, 415, `{"error":"content type must be application/json or text/plain"}`)
	f("", ok, 415, `{"error":"content type must be application/json or text/plain"}`)

	big := `{"site":"example.com","page":"/a","referrer":"` + strings.Repeat("x", MaxBodyBytes) + `"}`
	f(js, big, 413, `{"error":"body larger than 64 KiB"}`)
	// Without a Content-Length (chunked), the limit still holds.
	req := httptest.NewRequest(http.MethodPost, "/v1/events", struct{ *strings.Reader }{strings.NewReader(big)})
	req.ContentLength = -1
	req.Header.Set("Content-Type", js)
	if w := srv.do(req); w.Code != 413 {
		t.Fatalf("chunked oversize: %d %s", w.Code, w.Body)
	}

	// Events as published: normalised, stamped, hashed.
	seen := len(pub.events())
	f(js, `{"site":"Blog.Example.com","page":"https://blog.example.com/x/?a=1","referrer":"https://t.co/abc?x","id":"client-1","webdriver":true}`, 202, `{"accepted":1}`)
	e := pub.events()[seen]
	want := viewcount.Event{
		Time: testNow.Truncate(time.Millisecond), Site: "blog.example.com", Page: "/x", Referrer: "https://t.co/abc",
		UA: chromeUA, ID: "client-1", Webdriver: true, Source: viewcount.SourceBeacon,
		Visitor: VisitorID(testSalt, "blog.example.com", testIP, chromeUA),
		Network: NetworkID(testSalt, netip.MustParseAddr(testIP)),
		Headers: viewcount.HeadersSeen,
	}
	if e != want {
		t.Fatalf("event\n got %+v\nwant %+v", e, want)
	}
	srv.noLeaks(t)
}

func TestBeaconNotDurable(t *testing.T) {
	srv := newTestServer(t, downPublisher(t), fixedSalt(t, testSalt), time.Now, nil)
	w := srv.beacon("application/json", `{"site":"example.com","page":"/a"}`)
	if w.Code != 503 {
		t.Fatalf("status %d", w.Code)
	}
	var body struct{ Error string }
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Error == "" || strings.Contains(body.Error, "nats") {
		t.Fatalf("503 body %s: internal details must stay in the log", w.Body)
	}
	if !strings.Contains(srv.logs.String(), "nats:") {
		t.Fatalf("cause of the 503 not logged:\n%s", srv.logs)
	}
	srv.noLeaks(t)
}

func TestTrustedProxy(t *testing.T) {
	const proxy, real = "192.0.2.10", "198.51.100.9"
	f := func(trusted []string, remote, want string) {
		t.Helper()
		pub := newRecorder(t)
		srv := newTestServer(t, pub, fixedSalt(t, testSalt), time.Now, trusted)
		req := httptest.NewRequest(http.MethodGet, "/p.gif?site=example.com&page=/", nil)
		req.RemoteAddr = remote + ":5000"
		req.Header.Set("X-Forwarded-For", real)
		checkGIF(t, srv.do(req), http.StatusOK)
		e := pub.events()[0]
		if e.Visitor != VisitorID(testSalt, "example.com", want, chromeUA) || e.Network != NetworkID(testSalt, netip.MustParseAddr(want)) {
			t.Fatalf("trusted=%v remote=%s: ids not those of %s", trusted, remote, want)
		}
	}
	f(nil, proxy, proxy)                                      // no trusted proxies: the header is ignored
	f([]string{"192.0.2.0/24"}, proxy, real)                  // from a trusted proxy: believed
	f([]string{"192.0.2.0/24"}, "203.0.113.5", "203.0.113.5") // from anyone else: ignored
}

func TestVisitorIDDaily(t *testing.T) {
	c := streamtest.Open(t, 2)
	kv, err := c.KV(context.Background(), viewcount.BucketSalts)
	if err != nil {
		t.Fatal(err)
	}
	pub := newRecorder(t)
	var now time.Time
	srv := newTestServer(t, pub, NewSalts(kv, &countingRandom{next: 1}, discard()), func() time.Time { return now }, nil)
	hit := func(at time.Time, site string) viewcount.Event {
		t.Helper()
		now = at
		checkGIF(t, srv.pixel("site="+site+"&page=/"), http.StatusOK)
		evs := pub.events()
		return evs[len(evs)-1]
	}
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	morning := hit(day.Add(8*time.Hour), "example.com")
	evening := hit(day.Add(23*time.Hour+59*time.Minute), "example.com")
	if morning.Visitor != evening.Visitor || morning.Network != evening.Network {
		t.Fatal("ids changed within a day")
	}
	if other := hit(day.Add(12*time.Hour), "example.org"); other.Visitor == morning.Visitor || other.Network != morning.Network {
		t.Fatal("visitor id must differ per site (network id need not)")
	}
	next := hit(day.Add(24*time.Hour), "example.com")
	if next.Visitor == morning.Visitor || next.Network == morning.Network {
		t.Fatal("ids linkable across days")
	}
}

// trackerBudget is vc.js's budget on the wire, gzipped, in bytes: it is on
// every page of every site.
const trackerBudget = 2560

func TestScript(t *testing.T) {
	srv := newTestServer(t, newRecorder(t), fixedSalt(t, testSalt), time.Now, nil)
	w := srv.do(httptest.NewRequest(http.MethodGet, "/vc.js", nil))
	if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "application/javascript") ||
		w.Header().Get("Cache-Control") != "public, max-age=3600" {
		t.Fatalf("%d %v", w.Code, w.Header())
	}
	js := w.Body.String()
	for _, s := range []string{"sendBeacon", "'/v1/events'", "'/p.gif?'", "data-site", "pushState", "webdriver", "document.currentScript",
		"securitypolicyviolation", "data-vc-count", "data-vc-label", "'/counts'", "toLocaleString", "keepalive", "j.position", "c.own", "'vc_own'",
		"type: 'engagement'", "engaged_ms", "age_ms", "'visibilitychange'", "'pagehide'", "'pageshow'", "hasFocus()", "passive: true", "prerenderingchange"} {
		if !strings.Contains(js, s) {
			t.Errorf("tracker lacks %s", s)
		}
	}
	// Served without its whole-line comments and indentation, line for line
	// otherwise (trimScript).
	if strings.Contains(js, "\n//") || strings.Contains(js, "\n ") || strings.HasPrefix(js, "//") ||
		!strings.Contains(js, "if (!s) return;\n") || !strings.Contains(string(trackerSource), "// Viewcount tracker") {
		t.Errorf("tracker served with its comments or indentation:\n%.300s", js)
	}
	req := httptest.NewRequest(http.MethodGet, "/vc.js", nil)
	req.Header.Set("If-None-Match", w.Header().Get("ETag"))
	if w := srv.do(req); w.Code != http.StatusNotModified {
		t.Fatalf("revalidation: %d", w.Code)
	}

	// On the wire it is gzipped (the script's size budget is for its
	// gzipped form, checked below), under its own ETag.
	req = httptest.NewRequest(http.MethodGet, "/vc.js", nil)
	req.Header.Set("Accept-Encoding", "br, gzip;q=0.8")
	gz := srv.do(req)
	if gz.Header().Get("Content-Encoding") != "gzip" || gz.Header().Get("Vary") != "Accept-Encoding" ||
		gz.Header().Get("ETag") == w.Header().Get("ETag") {
		t.Fatalf("gzipped tracker: %v", gz.Header())
	}
	if n := gz.Body.Len(); n >= trackerBudget {
		t.Fatalf("tracker is %d bytes gzipped, budget %d", n, trackerBudget)
	}
	t.Logf("tracker: %d bytes, %d gzipped", w.Body.Len(), gz.Body.Len())
	zr, err := gzip.NewReader(gz.Body)
	if err != nil {
		t.Fatal(err)
	}
	if plain, err := io.ReadAll(zr); err != nil || string(plain) != js {
		t.Fatalf("gzipped tracker does not decode to the script: %v", err)
	}
	req.Header.Set("If-None-Match", gz.Header().Get("ETag"))
	if w := srv.do(req); w.Code != http.StatusNotModified {
		t.Fatalf("revalidation of the gzipped tracker: %d", w.Code)
	}
	for _, ae := range []string{"gzip;q=0", "identity", "br", "x-gzip;q=0.0"} {
		req := httptest.NewRequest(http.MethodGet, "/vc.js", nil)
		req.Header.Set("Accept-Encoding", ae)
		if w := srv.do(req); w.Header().Get("Content-Encoding") != "" || w.Body.String() != js {
			t.Errorf("Accept-Encoding %q: got %v", ae, w.Header())
		}
	}

	w = srv.do(httptest.NewRequest(http.MethodOptions, "/v1/events", nil))
	if w.Code != http.StatusNoContent || w.Header().Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("preflight: %d %v", w.Code, w.Header())
	}
}

func FuzzDecodeBeacon(f *testing.F) {
	for _, s := range []string{
		`{"site":"example.com","page":"/a"}`, `[{"site":"a","page":"/"},{"page":1}]`, `[]`, `[1]`, `{"webdriver":"x"}`, ` `, `[{}`,
		`{"type":"engagement","site":"a","page":"/","id":"x","engaged_ms":1,"scroll":2,"age_ms":3}`, `{"engaged_ms":"x"}`, `{"type":7}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		hits, _, err := decodeBeacon(body)
		if err != nil {
			if !errors.Is(err, ErrBadInput) || err.Error() == "" {
				t.Fatalf("error %v is not a worded ErrBadInput", err)
			}
			return
		}
		if len(hits) < 1 || len(hits) > MaxBeaconEvents {
			t.Fatalf("%d hits accepted", len(hits))
		}
	})
}

// BenchmarkPixel is the CPU cost of a hit up to the publish: routing, query
// decoding, normalisation, salts, both hashes and the GIF response. The
// publisher returns at once, so no JetStream time is included.
func BenchmarkPixel(b *testing.B) {
	srv := newTestServer(b, nopPublisher{}, fixedSalt(b, testSalt), time.Now, nil)
	req := httptest.NewRequest(http.MethodGet,
		"/p.gif?site=example.com&page=%2Fblog%2F2026%2Fsome-post%2F%3Futm_source%3Dnews&ref=https%3A%2F%2Fwww.google.com%2F", nil)
	req.RemoteAddr = testIP + ":40000"
	for k, v := range chromiumPixel { // what a browser sends, for the header flags to read
		req.Header.Set(k, v)
	}
	req.Header.Set("User-Agent", chromeUA)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		srv.engine.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}

// BenchmarkBeacon is BenchmarkPixel for JSON beacons of 10 events and for
// the batch endpoint's 100 (what loadgen --endpoint batch sends), with
// hints as the tracker reports them, and for one engagement report (what
// vc.js sends when a page is hidden).
func BenchmarkBeacon(b *testing.B) {
	ev := `{"site":"example.com","page":"/blog/2026/some-post","referrer":"https://www.google.com/","id":"0123456789abcdef0123","webdriver":false,` +
		`"hints":{"sw":1920,"sh":1080,"lang":2,"tz":true,"uad":true,"sec":true}}`
	for _, n := range []int{10, 100} {
		body := "[" + strings.TrimSuffix(strings.Repeat(ev+",", n), ",") + "]"
		b.Run("events="+strconv.Itoa(n), func(b *testing.B) { benchmarkBeacon(b, body, n) })
	}
	b.Run("engagement", func(b *testing.B) {
		benchmarkBeacon(b, `{"type":"engagement","site":"example.com","page":"/blog/2026/some-post","referrer":"https://www.google.com/",`+
			`"id":"0123456789abcdef0123","engaged_ms":48210,"scroll":75,"age_ms":61034}`, 1)
	})
}

func benchmarkBeacon(b *testing.B, body string, n int) {
	srv := newTestServer(b, nopPublisher{}, fixedSalt(b, testSalt), time.Now, nil)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/v1/events", strings.NewReader(body))
		req.RemoteAddr = testIP + ":40000"
		req.Header.Set("User-Agent", chromeUA)
		req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
		w := httptest.NewRecorder()
		srv.engine.ServeHTTP(w, req)
		if w.Code != http.StatusAccepted {
			b.Fatal(w.Code, w.Body)
		}
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "events/s")
}

// nopPublisher stands in for JetStream in the decode benchmarks only: they
// measure the CPU of request → event, not publishing (BenchmarkPublish does).
type nopPublisher struct{}

func (nopPublisher) Publish(context.Context, []viewcount.Event) (viewcount.StreamPosition, error) {
	return viewcount.StreamPosition{}, nil
}

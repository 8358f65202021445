package loadgen

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/viewcount/viewcount/ingest"
)

// decodeHits is what a server makes of a loadgen request: the hits back,
// with the client's UA and IP from the headers. It is strict: unknown JSON
// fields, a missing id or a malformed header fail.
func decodeHits(r *http.Request) ([]Hit, error) {
	ua, ip := r.Header.Get("User-Agent"), r.Header.Get("X-Forwarded-For")
	if _, err := netip.ParseAddr(ip); err != nil {
		return nil, err
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/p.gif":
		q := r.URL.Query()
		for _, k := range []string{"site", "page", "ref", "id"} {
			if _, ok := q[k]; !ok {
				return nil, fmt.Errorf("pixel without %s", k)
			}
		}
		return []Hit{{Site: q.Get("site"), Page: q.Get("page"), Referrer: q.Get("ref"), ID: q.Get("id"),
			Webdriver: q.Get("wd") == "1", UA: ua, IP: ip}}, nil
	case r.Method == http.MethodPost && r.URL.Path == "/v1/events":
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		var evs []ingest.BeaconEvent
		ct := r.Header.Get("Content-Type")
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.DisallowUnknownFields()
		switch {
		case ct == "application/json" && body[0] == '[':
			err = dec.Decode(&evs)
		case strings.HasPrefix(ct, "text/plain") && body[0] == '{':
			evs = make([]ingest.BeaconEvent, 1)
			err = dec.Decode(&evs[0])
		default:
			return nil, fmt.Errorf("content type %q with body %.20q", ct, body)
		}
		if err != nil {
			return nil, err
		}
		hs := make([]Hit, len(evs))
		for i, e := range evs {
			hs[i] = Hit{Beacon: true, Site: e.Site, Page: e.Page, Referrer: e.Referrer, ID: e.ID, Webdriver: e.Webdriver, Hints: e.Hints, UA: ua, IP: ip}
		}
		return hs, nil
	}
	return nil, fmt.Errorf("unexpected %s %s", r.Method, r.URL.Path)
}

func TestRequestsWellFormed(t *testing.T) {
	var mu sync.Mutex
	var got []Hit
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hs, err := decodeHits(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		got = append(got, hs...)
		mu.Unlock()
	}))
	defer srv.Close()

	sent := newTestGenerator(t, DefaultMix(), 31).All(600)
	// Every class must be covered, both transports too.
	classes := make(map[Class]bool)
	for _, h := range sent {
		classes[h.Class] = true
	}
	if len(classes) < 8 {
		t.Fatalf("only %d classes in 600 hits", len(classes))
	}
	for _, h := range sent {
		req, err := h.Request(srv.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s: %s", h.ID, resp.Status, msg)
		}
	}
	// A batch as the hot loop sends it: the request writer's bytes.
	batch := sent[:50]
	raw, err := newRequestWriter(srv.Listener.Addr().String(), "").batch(batch)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write(raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("batch: %s", resp.Status)
	}

	if len(got) != len(sent)+len(batch) {
		t.Fatalf("server decoded %d hits, sent %d", len(got), len(sent)+len(batch))
	}
	strip := func(h Hit) Hit {
		h.Class, h.Retry, h.At = "", false, 0
		if !h.Beacon {
			h.Hints = nil
		}
		return h
	}
	for i, h := range sent {
		if want := strip(h); !reflect.DeepEqual(got[i], want) {
			t.Fatalf("hit %d decoded as\n%+v\nsent\n%+v", i, got[i], want)
		}
	}
	for i, h := range batch {
		want := strip(h)
		want.Beacon, want.UA, want.IP = true, batch[0].UA, batch[0].IP
		if g := got[len(sent)+i]; !reflect.DeepEqual(g, want) {
			t.Fatalf("batch hit %d decoded as\n%+v\nsent\n%+v", i, g, want)
		}
	}
}

func TestBatchRequestEmpty(t *testing.T) {
	if _, err := newRequestWriter("127.0.0.1:1", "").batch(nil); err == nil {
		t.Fatal("empty batch accepted")
	}
}

// readWire parses a request the requestWriter wrote, as a server would.
func readWire(t testing.TB, raw []byte) *http.Request {
	t.Helper()
	br := bufio.NewReader(bytes.NewReader(raw))
	req, err := http.ReadRequest(br)
	if err != nil {
		t.Fatalf("%v in %q", err, raw)
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		t.Fatal(err)
	}
	if br.Buffered() != 0 || req.ContentLength >= 0 && int64(len(body)) != req.ContentLength {
		t.Fatalf("request framing: %d bytes after it, body %d of %d", br.Buffered(), len(body), req.ContentLength)
	}
	if req.Host != "127.0.0.1:8080" {
		t.Fatalf("Host %q", req.Host)
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	return req
}

// TestWireRequests: what the hot loop writes is what Hit.Request sends.
func TestWireRequests(t *testing.T) {
	w := newRequestWriter("127.0.0.1:8080", "")
	sent := newTestGenerator(t, DefaultMix(), 31).All(600)
	for _, h := range sent {
		var raw []byte
		var err error
		if h.Beacon {
			raw, err = w.beacon(&h)
		} else {
			raw, err = w.pixel(&h)
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeHits(readWire(t, raw))
		if err != nil {
			t.Fatalf("%s: %v", h.ID, err)
		}
		want := h
		want.Class, want.Retry, want.At = "", false, 0
		if !h.Beacon {
			want.Hints = nil
		}
		if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
			t.Fatalf("%s decoded as\n%+v\nsent\n%+v", h.ID, got, want)
		}
	}
}

// TestBatchBodyIsJSON decodes the appended batch body with encoding/json
// and compares it with the hits.
func TestBatchBodyIsJSON(t *testing.T) {
	hits := newTestGenerator(t, DefaultMix(), 7).All(100)
	hits[3].Page, hits[4].Referrer = "/ünïcode/\"quoted\"\\back\tslash\n<&>\u2028", "\x00\x1f\x7f\xff\xfe"
	req := readWire(t, must(newRequestWriter("127.0.0.1:8080", "").batch(hits)))
	if req.Method != http.MethodPost || req.URL.Path != "/v1/events" || req.Header.Get("Content-Type") != "application/json" ||
		req.UserAgent() != hits[0].UA || req.Header.Get("X-Forwarded-For") != hits[0].IP {
		t.Fatalf("%s %s %v", req.Method, req.URL, req.Header)
	}
	var got []ingest.BeaconEvent
	dec := json.NewDecoder(req.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatal(err)
	}
	// As json.Marshal of the hits' events decodes (invalid UTF-8 → U+FFFD).
	marshalled, err := json.Marshal(func() []ingest.BeaconEvent {
		evs := make([]ingest.BeaconEvent, len(hits))
		for i := range hits {
			evs[i] = hits[i].beaconEvent()
		}
		return evs
	}())
	if err != nil {
		t.Fatal(err)
	}
	var want []ingest.BeaconEvent
	if err := json.Unmarshal(marshalled, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("batch decoded as\n%+v\nwant\n%+v", got, want)
	}
	if got[3].Page != hits[3].Page || got[4].Referrer != "\x00\x1f\x7f\ufffd\ufffd" {
		t.Fatalf("escapes: %q %q", got[3].Page, got[4].Referrer)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestEscaping(t *testing.T) {
	f := func(s string) {
		t.Helper()
		h := Hit{Site: "a.example", Page: s, Referrer: s, ID: s, UA: "ua", IP: "192.0.2.1"}
		raw := string(appendPixelTarget(nil, &h))
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("%q: %v", raw, err)
		}
		q, err := url.ParseQuery(u.RawQuery)
		if err != nil || q.Get("page") != s || q.Get("ref") != s || q.Get("id") != s || len(q) != 4 {
			t.Fatalf("%q encoded as %q, decoded as %v (%v)", s, raw, q, err)
		}
		var back string
		if err := json.Unmarshal(appendJSONString(nil, s), &back); err != nil {
			t.Fatalf("JSON of %q: %v", s, err)
		}
		var want string
		_ = json.Unmarshal(must(json.Marshal(s)), &want)
		if back != want {
			t.Fatalf("JSON of %q decoded as %q, want %q", s, back, want)
		}
	}
	f("")
	f("/blog/item-12")
	f("https://www.google.com/search?q=a+b&x=1#frag")
	f("a b;c=d&e%f+g")
	f("/ünïcode/日本語")
	f("\x00\t\r\n\"\\<>&\u2028\u2029")
	f("\xff\xfe broken utf-8")
	f("~-._:@!$'()*,")

	count := string(newRequestWriter("h", "/base/").count("a.example", "/a b/ü?x=1"))
	if !strings.HasPrefix(count, "GET /base/v1/sites/a.example/count?page=/a%20b/%C3%BC%3Fx%3D1 HTTP/1.1\r\nHost: h\r\n") {
		t.Fatalf("count request %q", count)
	}
	if p := string(appendEscaped(nil, "a/b:c", false)); p != "a%2Fb%3Ac" {
		t.Fatalf("path segment %q", p)
	}
}

func TestWireRefusesHeaderInjection(t *testing.T) {
	w := newRequestWriter("h", "")
	for _, h := range []Hit{{UA: "ua\r\nX-Evil: 1", IP: "192.0.2.1"}, {UA: "ua", IP: "192.0.2.1\n"}} {
		if _, err := w.pixel(&h); err == nil {
			t.Errorf("pixel with %q / %q accepted", h.UA, h.IP)
		}
		if _, err := w.batch([]Hit{h}); err == nil {
			t.Errorf("batch with %q / %q accepted", h.UA, h.IP)
		}
		if _, err := h.Request("http://h"); err == nil {
			t.Errorf("Request with %q / %q accepted", h.UA, h.IP)
		}
	}
	if _, err := w.batch(nil); err == nil {
		t.Error("empty batch accepted")
	}
}

func BenchmarkPixelRequestBuild(b *testing.B) {
	hits := newTestGenerator(b, DefaultMix(), 1).All(1000)
	w := newRequestWriter("127.0.0.1:8080", "")
	b.ReportAllocs()
	n := 0
	for i := 0; b.Loop(); i++ {
		raw, err := w.pixel(&hits[i%len(hits)])
		if err != nil {
			b.Fatal(err)
		}
		n += len(raw)
	}
	b.ReportMetric(float64(n)/float64(b.N), "bytes/req")
}

func BenchmarkBatchRequestBuild(b *testing.B) {
	hits := newTestGenerator(b, DefaultMix(), 1).All(1000)
	w := newRequestWriter("127.0.0.1:8080", "")
	b.ReportAllocs()
	n := 0
	for i := 0; b.Loop(); i++ {
		j := i % 10 * 100
		raw, err := w.batch(hits[j : j+100])
		if err != nil {
			b.Fatal(err)
		}
		n += len(raw)
	}
	b.ReportMetric(float64(n)/float64(b.N), "bytes/req")
}

// BenchmarkPixelRequestNetHTTP is the *http.Request path (Hit.Request),
// which the hot loop used before, for comparison.
func BenchmarkPixelRequestNetHTTP(b *testing.B) {
	hits := newTestGenerator(b, DefaultMix(), 1).All(1000)
	for i := range hits {
		hits[i].Beacon = false
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := hits[i%len(hits)].Request("http://127.0.0.1:8080"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGeneratorNext(b *testing.B) {
	g := newTestGenerator(b, DefaultMix(), 1)
	b.ReportAllocs()
	for b.Loop() {
		g.Next()
	}
}

package ingest

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestSampleRequest holds a sample to what a real hit publishes: the same
// request gives the same events, whatever the route, and nothing reaches
// the stream; what ingest refuses is answered as the client would be.
func TestSampleRequest(t *testing.T) {
	salts := fixedSalt(t, []byte{7})
	now := func() time.Time { return testNow }
	rec := newRecorder(t)
	srv := newTestServer(t, rec, salts, now, nil)
	reqs := []func() *http.Request{
		func() *http.Request {
			r := httptest.NewRequest(http.MethodGet, "/p.gif?site=Example.com&page=/a/?x=1&ref=https://t.co/x&id=e1", nil)
			r.Header.Set("Accept-Language", "en")
			r.Header.Set("Sec-Fetch-Dest", "image")
			return r
		},
		func() *http.Request {
			r := httptest.NewRequest(http.MethodPost, "/v1/events", strings.NewReader(`[{"site":"example.com","page":"/b","id":"e2","hints":{"sw":390,"sh":844}},{"site":"example.com","page":"/c"}]`))
			r.Header.Set("Content-Type", "text/plain;charset=UTF-8")
			r.Header.Set("User-Agent", "curl/8.9.1")
			return r
		},
	}
	for i, mk := range reqs {
		before := len(rec.events())
		if w := srv.do(mk()); w.Code >= 300 {
			t.Fatalf("request %d: %d", i, w.Code)
		}
		published := rec.events()[before:]
		r := mk()
		if r.Header.Get("User-Agent") == "" {
			r.Header.Set("User-Agent", chromeUA) // what srv.do adds
		}
		s := SampleRequest(Config{PublishTimeout: time.Second}, salts, r, netip.MustParseAddr(testIP), discard(), now)
		// An event sent without an id gets a random one.
		for j := range published {
			if published[j].ID != "e1" && published[j].ID != "e2" && j < len(s.Events) {
				published[j].ID, s.Events[j].ID = "", ""
			}
		}
		if s.Status >= 300 || !reflect.DeepEqual(s.Events, published) {
			t.Errorf("request %d: sample %d %+v\npublished %+v", i, s.Status, s.Events, published)
		}
	}
	reqsBefore := rec.reqs
	s := SampleRequest(Config{}, salts, httptest.NewRequest(http.MethodPost, "/v1/events", strings.NewReader(`{}`)), netip.Addr{}, discard(), now)
	if s.Status != http.StatusUnsupportedMediaType || !strings.Contains(s.Error, "content type") || len(s.Events) != 0 {
		t.Errorf("refused sample: %+v", s)
	}
	if rec.reqs != reqsBefore {
		t.Error("a sample was published")
	}
}

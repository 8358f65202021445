package ingest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// slowBeacon is decodeBeacon without the fast path: encoding/json only.
func slowBeacon(t testing.TB, body []byte) ([]Hit, bool, error) {
	t.Helper()
	s := strings.TrimLeft(string(body), " \t\r\n")
	if strings.HasPrefix(s, "{") {
		var e BeaconEvent
		if err := json.Unmarshal(body, &e); err != nil {
			return nil, false, err
		}
		return []Hit{e.hit()}, false, nil
	}
	var evs []BeaconEvent
	if err := json.Unmarshal(body, &evs); err != nil {
		return nil, true, err
	}
	hits := make([]Hit, len(evs))
	for i := range evs {
		hits[i] = evs[i].hit()
	}
	return hits, true, nil
}

var fastBeaconCorpus = []string{
	`{"site":"example.com","page":"/a"}`,
	` [ {"site":"a.example","page":"/","referrer":"https://r.example/x","id":"abc","webdriver":false,"hints":{"sw":1920,"sh":1080,"lang":2,"tz":true,"uad":true,"sec":true}} ] `,
	"[\n  {\"site\": \"a\",\n   \"page\": \"/é\"},\n  {\"site\":\"b\"}\n]",
	`[{"site":"a","page":"/"},{"page":1}]`,
	`{"hints":{"sw":-5,"sh":999999,"lang":300}}`,
	`{"hints":{}}`, `{}`, `[{}]`, `[]`, `[1]`, `{"webdriver":"x"}`, ` `, `[{}`, `{"Site":"upper"}`,
	`{"site":"a","site":"b"}`, `{"page":"/a\"b"}`, `{"page":"\u00e9"}`, `{"hints":null}`, `{"hints":{"sw":1.5}}`,
	`{"hints":{"sw":1e3}}`, `{"hints":{"sw":01}}`, `{"hints":{"sw":-0}}`, `{"extra":1,"site":"a"}`, "{\"page\":\"\xff\"}",
	`{"site":"a"} x`, `[{"site":"a"},]`, `{"webdriver":true,"hints":{"tz":false},"hints":{"sec":true}}`,
	`{"hints":{"sw":123456789012345678901}}`, `{"site":"a",}`, `{"site" "a"}`,
}

// The fast path never disagrees with encoding/json: when it answers, the
// hits are the ones encoding/json decodes from the same body.
func FuzzFastBeaconMatchesJSON(f *testing.F) {
	for _, s := range fastBeaconCorpus {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkFastBeacon(t, body)
	})
}

func checkFastBeacon(t *testing.T, body []byte) {
	t.Helper()
	hits, array, ok := fastBeacon(body)
	if !ok {
		return
	}
	want, wantArray, err := slowBeacon(t, body)
	if err != nil {
		t.Fatalf("%q: fast path decoded %d hits, encoding/json fails: %v", body, len(hits), err)
	}
	if array != wantArray || !reflect.DeepEqual(hits, want) {
		t.Fatalf("%q:\nfast %+v (array %v)\njson %+v (array %v)", body, hits, array, want, wantArray)
	}
	if len(hits) < 1 || len(hits) > MaxBeaconEvents {
		t.Fatalf("%q: %d hits", body, len(hits))
	}
}

// What trackers send must take the fast path.
func TestFastBeaconTakesTrackerBodies(t *testing.T) {
	for _, s := range fastBeaconCorpus[:3] {
		if _, _, ok := fastBeacon([]byte(s)); !ok {
			t.Errorf("%q: not decoded by the fast path", s)
		}
		checkFastBeacon(t, []byte(s))
	}
	for _, s := range fastBeaconCorpus {
		checkFastBeacon(t, []byte(s))
	}
	// 101 events is one too many for the fast path as for the slow one.
	big := "[" + strings.TrimSuffix(strings.Repeat(`{"site":"a"},`, MaxBeaconEvents+1), ",") + "]"
	if _, _, ok := fastBeacon([]byte(big)); ok {
		t.Errorf("%d events decoded", MaxBeaconEvents+1)
	}
}

// A batch's events share one client, so accept hashes the visitor once per
// run of one site and parses a repeated referrer once; interleaved sites and
// referrers must still get each event its own values.
func TestBatchPerEventSiteAndReferrer(t *testing.T) {
	pub := newRecorder(t)
	srv := newTestServer(t, pub, fixedSalt(t, testSalt), func() time.Time { return testNow }, nil)
	body := `[{"site":"a.example","page":"/1","referrer":"https://r.example/x?q=1"},` +
		`{"site":"b.example","page":"/2","referrer":"https://r.example/x?q=1"},` +
		`{"site":"a.example","page":"/3","referrer":"https://s.example/y"},` +
		`{"site":"a.example","page":"/4","referrer":"https://s.example/y"}]`
	if w := srv.beacon("application/json", body); w.Code != 202 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	evs := pub.events()
	if len(evs) != 4 {
		t.Fatalf("%d events", len(evs))
	}
	bySite := map[string]uint64{}
	for _, e := range evs {
		if v, ok := bySite[e.Site]; ok && v != e.Visitor {
			t.Errorf("%s: visitor %x and %x in one request", e.Site, v, e.Visitor)
		}
		bySite[e.Site] = e.Visitor
	}
	if bySite["a.example"] == bySite["b.example"] {
		t.Errorf("both sites got visitor %x: the id must depend on the site", bySite["a.example"])
	}
	for _, e := range evs {
		want := map[string]string{"/1": "https://r.example/x", "/2": "https://r.example/x", "/3": "https://s.example/y", "/4": "https://s.example/y"}[e.Page]
		if e.Referrer != want {
			t.Errorf("%s: referrer %q, want %q", e.Page, e.Referrer, want)
		}
	}
}

package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// slowBeacon is the reference decoder: encoding/json, then the rule that a
// text field must be valid Unicode as sent (textErr), judged independently of
// checkBeaconText: a field is broken when its decoded value holds more
// U+FFFD than its literal spelled out, i.e. encoding/json replaced something.
func slowBeacon(t testing.TB, body []byte) (hits []Hit, array bool, err, textErr error) {
	t.Helper()
	type texts struct {
		Site     json.RawMessage `json:"site"`
		Page     json.RawMessage `json:"page"`
		Referrer json.RawMessage `json:"referrer"`
		ID       json.RawMessage `json:"id"`
	}
	var raws []texts
	s := strings.TrimLeft(string(body), " \t\r\n")
	if strings.HasPrefix(s, "{") {
		var e BeaconEvent
		if err := json.Unmarshal(body, &e); err != nil {
			return nil, false, err, nil
		}
		hits = []Hit{e.hit()}
		raws = make([]texts, 1)
		if err := json.Unmarshal(body, &raws[0]); err != nil {
			t.Fatalf("%q: decodes as an event but not its texts: %v", body, err)
		}
	} else {
		array = true
		var evs []BeaconEvent
		if err := json.Unmarshal(body, &evs); err != nil {
			return nil, true, err, nil
		}
		hits = make([]Hit, len(evs))
		for i := range evs {
			hits[i] = evs[i].hit()
		}
		if err := json.Unmarshal(body, &raws); err != nil {
			t.Fatalf("%q: decodes as events but not their texts: %v", body, err)
		}
	}
	for i, r := range raws {
		for _, lit := range []json.RawMessage{r.Site, r.Page, r.Referrer, r.ID} {
			var v string
			if json.Unmarshal(lit, &v) != nil {
				continue // not a string: the decoder refused it already
			}
			if strings.Count(v, "\uFFFD") != spelledReplacements(lit) {
				textErr = fmt.Errorf("event %d: %s replaced", i, lit)
			}
		}
	}
	return hits, array, nil, textErr
}

// spelledReplacements counts the U+FFFD a JSON string literal spells out,
// as UTF-8 bytes or as the escape \ufffd.
func spelledReplacements(lit []byte) int {
	n := 0
	for i := 0; i < len(lit); i++ {
		switch {
		case lit[i] == '\\' && i+1 < len(lit) && lit[i+1] == 'u' && i+5 < len(lit):
			if strings.EqualFold(string(lit[i+2:i+6]), "fffd") {
				n++
			}
			i += 5
		case lit[i] == '\\':
			i++
		case strings.HasPrefix(string(lit[i:]), "\uFFFD"):
			n++
			i += 2
		}
	}
	return n
}

var fastBeaconCorpus = []string{
	`{"site":"example.com","page":"/a"}`,
	` [ {"site":"a.example","page":"/","referrer":"https://r.example/x","id":"abc","webdriver":false,"hints":{"sw":1920,"sh":1080,"lang":2,"tz":true,"uad":true,"sec":true}} ] `,
	"[\n  {\"site\": \"a\",\n   \"page\": \"/é\"},\n  {\"site\":\"b\"}\n]",
	`[{"site":"a.example","page":"/x","id":"abc"},{"type":"engagement","site":"a.example","page":"/x?utm_source=y","referrer":"https://r.example/","id":"abc","engaged_ms":12345,"scroll":80,"age_ms":60000,"host":"a.example"}]`,
	`[{"site":"a","page":"/"},{"page":1}]`,
	`{"hints":{"sw":-5,"sh":999999,"lang":300}}`,
	`{"hints":{}}`, `{}`, `[{}]`, `[]`, `[1]`, `{"webdriver":"x"}`, ` `, `[{}`, `{"Site":"upper"}`,
	`{"site":"a","site":"b"}`, `{"page":"/a\"b"}`, `{"page":"\u00e9"}`, `{"hints":null}`, `{"hints":{"sw":1.5}}`,
	`{"hints":{"sw":1e3}}`, `{"hints":{"sw":01}}`, `{"hints":{"sw":-0}}`, `{"extra":1,"site":"a"}`, "{\"page\":\"\xff\"}",
	`{"site":"a"} x`, `[{"site":"a"},]`, `{"webdriver":true,"hints":{"tz":false},"hints":{"sec":true}}`,
	`{"hints":{"sw":123456789012345678901}}`, `{"site":"a",}`, `{"site" "a"}`,
	`{"hints":{"sw":800,"sh":600,"ow":0,"oh":0}}`, `{"hints":{"ow":1366,"oh":768}}`, `{"hints":{"ow":1366}}`,
	`{"hints":{"ow":-3,"oh":99999}}`, `{"hints":{"ow":null,"oh":1}}`,
	`{"type":"view","engaged_ms":5}`, `{"type":"engagement","engaged_ms":-5,"scroll":101,"age_ms":99999999999}`, `{"engaged_ms":1.5}`,
	`{"engaged_ms":null}`, `{"type":null,"scroll":null}`, `{"scroll":"5"}`, `{"engaged_ms":1,"engaged_ms":2}`, `{"Engaged_MS":3}`,
	`{"type":"\u0065ngagement","engaged_ms":0}`, `{"age_ms":123456789012345678901}`, `{"engaged_ms":-0,"age_ms":0}`, `{"type":5}`,
	`{"type":"engagement","type":"view"}`, `{"type":""}`, `{"type":"engagement","type":""}`, `{"type":"","scroll":0}`, `{"scroll":1e2}`, `{"type":"engagement","hints":{"sw":1},"webdriver":true,"engaged_ms":3}`,
	`{"page":"\ud800"}`, `{"page":"\udc00x"}`, `{"page":"\ud83d\ude00"}`, `{"page":"\ud83d\u0041"}`, `{"page":"\ufffd"}`,
	"{\"page\":\"\xef\xbf\xbd\"}", `{"PAGE":"\ud800","page":"/ok"}`, `[{"id":"a"},{"referrer":"\udbff"}]`, `{"page":"\\ud800"}`,
}

// The fast path never disagrees with encoding/json: when it answers, the
// hits are the ones encoding/json decodes from the same body, and their
// text is what the client sent. The whole decoder accepts nothing the
// reference refuses.
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
	want, wantArray, jsonErr, textErr := slowBeacon(t, body)
	if hits, array, ok := fastBeacon(body); ok {
		if jsonErr != nil || textErr != nil {
			t.Fatalf("%q: fast path decoded %d hits, the reference refuses: %v", body, len(hits), errors.Join(jsonErr, textErr))
		}
		if array != wantArray || !reflect.DeepEqual(hits, want) {
			t.Fatalf("%q:\nfast %s (array %v)\njson %s (array %v)", body, showHits(hits), array, showHits(want), wantArray)
		}
		if len(hits) < 1 || len(hits) > MaxBeaconEvents {
			t.Fatalf("%q: %d hits", body, len(hits))
		}
	}
	// The whole decoder (fast path or fallback) keeps the text rule too.
	hits, array, err := decodeBeacon(body)
	switch {
	case err == nil && (jsonErr != nil || textErr != nil):
		t.Fatalf("%q: decoded %d hits, the reference refuses: %v", body, len(hits), errors.Join(jsonErr, textErr))
	case err == nil && (array != wantArray || !reflect.DeepEqual(hits, want)):
		t.Fatalf("%q:\ndecoded %s (array %v)\njson %s (array %v)", body, showHits(hits), array, showHits(want), wantArray)
	case jsonErr == nil && textErr != nil && err == nil:
		t.Fatalf("%q: broken text accepted", body)
	}
}

// showHits prints hits with their reports, not the reports' addresses.
func showHits(hits []Hit) string {
	var b strings.Builder
	for _, h := range hits {
		r := h.Report
		h.Report = nil
		fmt.Fprintf(&b, "\n  %+v", h)
		if r != nil {
			fmt.Fprintf(&b, " report %+v", *r)
		}
	}
	return b.String()
}

// What trackers send must take the fast path.
func TestFastBeaconTakesTrackerBodies(t *testing.T) {
	for _, s := range fastBeaconCorpus[:4] {
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

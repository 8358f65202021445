package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/stream/streamtest"
)

// errorOf is the "error" of a JSON answer.
func errorOf(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	var body struct{ Error string }
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatalf("answer %d %q: %v", w.Code, w.Body, err)
	}
	return body.Error
}

// Every engagement-related 400 of docs/engagement.md, for an object alone
// and as the third event of an array whose other events are fine: the
// request publishes nothing.
func TestEngagementBadInput(t *testing.T) {
	if want := "from 0 to " + strconv.Itoa(viewcount.MaxEngagedMS); !strings.HasSuffix(wantMS, want) {
		t.Fatalf("wantMS %q does not end %q", wantMS, want)
	}
	pub := newRecorder(t)
	srv := newTestServer(t, pub, fixedSalt(t, testSalt), func() time.Time { return testNow }, nil)
	const (
		view = `"site":"example.com","page":"/a"`
		eng  = `"type":"engagement","site":"example.com","page":"/a","id":"v1"`
		ms   = `: must be a whole number from 0 to 86400000`
	)
	good := `{` + view + `},{` + eng + `,"engaged_ms":5}`
	f := func(event, want string) {
		t.Helper()
		for _, c := range []struct{ body, want string }{
			{event, want},
			{`[` + good + `,` + event + `]`, "events[2]." + want},
		} {
			before := pub.reqs
			w := srv.beacon("text/plain;charset=UTF-8", c.body)
			if got := errorOf(t, w); w.Code != http.StatusBadRequest || got != c.want {
				t.Errorf("%s:\n got %d %q\nwant 400 %q", c.body, w.Code, got, c.want)
			}
			if pub.reqs != before {
				t.Errorf("%s: refused, but published", c.body)
			}
		}
	}
	// The type: an allow-list, spelt exactly.
	f(`{`+view+`,"type":"click"}`, `type: must be "view" or "engagement"`)
	f(`{`+view+`,"type":"Engagement"}`, `type: must be "view" or "engagement"`)
	f(`{`+view+`,"type":" view"}`, `type: must be "view" or "engagement"`)
	f(`{`+view+`,"type":5}`, `type: must be "view" or "engagement"`)
	f(`{`+view+`,"type":["engagement"]}`, `type: must be "view" or "engagement"`)
	f(`{`+view+`,"type":"engagement\u0000"}`, `type: must be "view" or "engagement"`)

	// What an engagement must carry.
	f(`{`+eng+`}`, "engaged_ms: required for an engagement")
	f(`{`+eng+`,"engaged_ms":null}`, "engaged_ms: required for an engagement")
	f(`{`+eng+`,"scroll":5,"age_ms":5}`, "engaged_ms: required for an engagement")
	f(`{"type":"engagement","site":"example.com","page":"/a","engaged_ms":5}`, "id: required for an engagement")
	f(`{"type":"engagement","site":"example.com","page":"/a","id":"","engaged_ms":5}`, "id: required for an engagement")
	f(`{"type":"engagement","site":"example.com","page":"/a","id":"é","engaged_ms":5}`, "id: must be printable ASCII")
	f(`{"type":"engagement","page":"/a","id":"v1","engaged_ms":5}`, "site: required")
	f(`{"type":"engagement","site":"example.com","id":"v1","engaged_ms":5}`, "page: required")
	f(`{"type":"engagement","site":"a b","page":"/a","id":"v1","engaged_ms":5}`, "site: not a domain name")

	// Its numbers: whole, within range, whatever the JSON spelling.
	for _, v := range []string{"-1", "86400001", "9223372036854775807", "99999999999999999999", "1.5", "1e3", "-0.0", `"5"`, "true", "{}", "[1]"} {
		f(`{`+eng+`,"engaged_ms":`+v+`}`, "engaged_ms"+ms)
		f(`{`+eng+`,"engaged_ms":5,"age_ms":`+v+`}`, "age_ms"+ms)
	}
	for _, v := range []string{"-1", "101", "255", "256", "50.5", `"50"`, "false"} {
		f(`{`+eng+`,"engaged_ms":5,"scroll":`+v+`}`, "scroll: must be a whole number from 0 to 100")
	}

	// A view carrying an engagement's numbers is a client's bug.
	f(`{`+view+`,"engaged_ms":5}`, "engaged_ms: only for an engagement")
	f(`{`+view+`,"type":"view","engaged_ms":0}`, "engaged_ms: only for an engagement")
	f(`{`+view+`,"scroll":50}`, "scroll: only for an engagement")
	f(`{`+view+`,"type":"view","age_ms":100}`, "age_ms: only for an engagement")
	f(`{`+view+`,"scroll":500}`, "scroll: only for an engagement")

	if n := srv.metrics.BadRequests.Load(); n == 0 {
		t.Error("no bad request counted")
	}
	srv.noLeaks(t)
}

// Views and engagement reports share a request, and reach the stream as
// what they are: the decoded events carry their Kind and Engagement.
func TestEngagementAccepted(t *testing.T) {
	pub := newRecorder(t)
	srv := newTestServer(t, pub, fixedSalt(t, testSalt), func() time.Time { return testNow }, nil)
	body := `[{"site":"example.com","page":"/a?utm_source=News","referrer":"https://r.example/x?q=1","id":"v1",` +
		`"hints":{"sw":1920,"sh":1080,"lang":2,"tz":true,"uad":true,"sec":true}},` +
		`{"type":"engagement","site":"Example.com","page":"https://example.com/a/?utm_source=News","referrer":"https://r.example/x?q=1",` +
		`"id":"v1","engaged_ms":12345,"scroll":80,"age_ms":60000,"webdriver":true,"hints":{"sw":1,"sh":1},"host":"example.com"},` +
		`{"type":"engagement","site":"example.com","page":"/b","id":"v0","engaged_ms":0},` +
		`{"type":"view","site":"example.com","page":"/c"},` +
		`{"type":null,"site":"example.com","page":"/d","engaged_ms":null},` +
		`{"type":"engagement","site":"example.com","page":"/b","id":"v0","engaged_ms":86400000,"scroll":100,"age_ms":86400000}]`
	// The tracker's own bodies take the fast path; the same with an
	// escape in it takes encoding/json's, to the same events.
	for _, b := range []string{body, strings.Replace(body, `"page":"/b"`, `"page":"\/b"`, 1)} {
		seen := len(pub.events())
		if w := srv.beacon("text/plain;charset=UTF-8", b); w.Code != http.StatusAccepted {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
		evs := pub.events()[seen:]
		if len(evs) != 6 {
			t.Fatalf("%d events published, want 6", len(evs))
		}
		visitor := VisitorID(testSalt, "example.com", testIP, chromeUA)
		network := NetworkID(testSalt, netip.MustParseAddr(testIP))
		want := []struct {
			kind   viewcount.Kind
			eng    viewcount.Engagement
			id     string
			page   string
			hints  bool
			webdrv bool
		}{
			{viewcount.KindView, viewcount.Engagement{}, "v1", "/a", true, false},
			{viewcount.KindEngagement, viewcount.Engagement{EngagedMS: 12345, Scroll: 80, AgeMS: 60000}, "v1", "/a", false, false},
			{viewcount.KindEngagement, viewcount.Engagement{}, "v0", "/b", false, false},
			{viewcount.KindView, viewcount.Engagement{}, "", "/c", false, false},
			{viewcount.KindView, viewcount.Engagement{}, "", "/d", false, false},
			{viewcount.KindEngagement, viewcount.Engagement{EngagedMS: 86400000, Scroll: 100, AgeMS: 86400000}, "v0", "/b", false, false},
		}
		for i, e := range evs {
			w := want[i]
			if e.Kind != w.kind || e.Engagement != w.eng || e.Page != w.page || e.Hints.Present != w.hints || e.Webdriver != w.webdrv {
				t.Errorf("event %d: %v %+v page %q hints %v webdriver %v; want %v %+v %q %v %v",
					i, e.Kind, e.Engagement, e.Page, e.Hints.Present, e.Webdriver, w.kind, w.eng, w.page, w.hints, w.webdrv)
			}
			if w.id != "" && e.ID != w.id || w.id == "" && len(e.ID) != 32 {
				t.Errorf("event %d: id %q, want %q (or a generated one)", i, e.ID, w.id)
			}
			// Same client, same day: the view's ids, on the view's
			// partition, stamped with the arrival time.
			if e.Visitor != visitor || e.Network != network || !e.Time.Equal(testNow.Truncate(time.Millisecond)) ||
				e.Source != viewcount.SourceBeacon || e.Site != "example.com" {
				t.Errorf("event %d: %+v", i, e)
			}
		}
		// An engagement's page, referrer and campaign are its view's.
		if v, e := evs[0], evs[1]; e.Referrer != v.Referrer || e.UTM != v.UTM || e.UTM.Source != "news" || e.Referrer != "https://r.example/x" {
			t.Errorf("engagement referrer %q utm %+v, view's %q %+v", e.Referrer, e.UTM, v.Referrer, v.UTM)
		}
	}
}

// A report sent after 00:00 UTC for a view of the day before gets that
// day's visitor and network ids, so it reaches the validator and the
// visitor of its view; in the same request, views and reports of the day
// get today's. Real salts bucket, fake clock.
func TestEngagementMidnight(t *testing.T) {
	c := streamtest.Open(t, 4)
	kv, err := c.KV(context.Background(), viewcount.BucketSalts)
	if err != nil {
		t.Fatal(err)
	}
	pub := newRecorder(t)
	var now time.Time
	srv := newTestServer(t, pub, NewSalts(kv, &countingRandom{next: 1}, discard()), func() time.Time { return now }, nil)
	yesterday, today := bytes.Repeat([]byte{1}, SaltLen), bytes.Repeat([]byte{2}, SaltLen) // in the order they are made
	const v6 = "2001:db8:aa:bb::7"
	post := func(at time.Time, ip, body string) []viewcount.Event {
		t.Helper()
		now = at
		seen := len(pub.events())
		req := httptest.NewRequest(http.MethodPost, "/v1/events", strings.NewReader(body))
		req.RemoteAddr = netip.AddrPortFrom(netip.MustParseAddr(ip), 40000).String()
		req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
		if w := srv.do(req); w.Code != http.StatusAccepted {
			t.Fatalf("%s: %d %s", body, w.Code, w.Body)
		}
		return pub.events()[seen:]
	}
	check := func(e viewcount.Event, salt []byte, ip string, at time.Time) {
		t.Helper()
		if e.Visitor != VisitorID(salt, e.Site, ip, chromeUA) || e.Network != NetworkID(salt, netip.MustParseAddr(ip)) {
			t.Errorf("%s %s %s: ids not those of salt %x", e.Kind, e.Site, e.Page, salt[0])
		}
		if !e.Time.Equal(at) {
			t.Errorf("%s %s: time %v, want the arrival %v", e.Kind, e.Page, e.Time, at)
		}
	}
	midnight := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	before := midnight.Add(-30 * time.Second)
	views := map[string]viewcount.Event{}
	for _, e := range append(post(before, testIP, `[{"site":"example.com","page":"/a","id":"v1"},{"site":"other.example","page":"/o","id":"o1"}]`),
		post(before, v6, `{"site":"example.com","page":"/6","id":"v6"}`)...) {
		views[e.ID] = e
	}
	check(views["v1"], yesterday, testIP, before)
	check(views["o1"], yesterday, testIP, before)
	check(views["v6"], yesterday, v6, before)

	after := midnight.Add(30 * time.Second)
	// The stream orders the request's events by partition: engaged_ms
	// tells them apart.
	evs := map[uint32]viewcount.Event{}
	for _, e := range post(after, testIP, `[`+
		`{"site":"example.com","page":"/new","id":"n1"},`+ // today's view
		`{"type":"engagement","site":"example.com","page":"/a","id":"v1","engaged_ms":1,"age_ms":60000},`+ // yesterday's view
		`{"type":"engagement","site":"example.com","page":"/new","id":"n1","engaged_ms":2,"age_ms":30000},`+ // sent at 00:00:00.000: today
		`{"type":"engagement","site":"other.example","page":"/o","id":"o1","engaged_ms":3,"age_ms":60000},`+
		`{"type":"engagement","site":"example.com","page":"/a","id":"v1","engaged_ms":4,"age_ms":86400000},`+ // the most: a day ago
		`{"type":"engagement","site":"example.com","page":"/a","id":"v1","engaged_ms":5,"age_ms":30001}]`) { // 23:59:59.999
		evs[e.Engagement.EngagedMS] = e
	}
	if len(evs) != 6 {
		t.Fatalf("%d events", len(evs))
	}
	check(evs[0], today, testIP, after)
	check(evs[1], yesterday, testIP, after)
	check(evs[2], today, testIP, after)
	check(evs[3], yesterday, testIP, after)
	check(evs[4], yesterday, testIP, after)
	check(evs[5], yesterday, testIP, after)
	for _, i := range []uint32{1, 4, 5} {
		if evs[i].Visitor != views["v1"].Visitor || evs[i].Network != views["v1"].Network {
			t.Errorf("report %d: visitor %#x, its view's %#x", i, evs[i].Visitor, views["v1"].Visitor)
		}
	}
	if evs[3].Visitor != views["o1"].Visitor {
		t.Errorf("other site's report: visitor %#x, its view's %#x", evs[3].Visitor, views["o1"].Visitor)
	}
	// An IPv6 client's partition key is its /32's, under that day's salt.
	r6 := post(after, v6, `{"type":"engagement","site":"example.com","page":"/6","id":"v6","engaged_ms":1,"age_ms":40000}`)
	check(r6[0], yesterday, v6, after)
	if r6[0].Visitor != views["v6"].Visitor {
		t.Errorf("IPv6 report: visitor %#x, its view's %#x", r6[0].Visitor, views["v6"].Visitor)
	}
	// Each report reached its view's partition.
	at := map[string]string{}
	for _, m := range readStream(t, pub.js) {
		for _, e := range m.Events {
			key := e.Site + e.ID
			if e.Kind == viewcount.KindView && e.ID != "n1" {
				at[key] = m.Subject
			} else if e.Kind == viewcount.KindEngagement && dayOf(e.Time.Add(-time.Duration(e.Engagement.AgeMS)*time.Millisecond)) < dayOf(midnight) && at[key] != m.Subject {
				t.Errorf("report for %s on %s, its view on %s", key, m.Subject, at[key])
			}
		}
	}

	// Once the view's salt is gone, a report gets today's ids: it will be
	// an orphan, and no salt is made again for a day that is over.
	if err := kv.Purge(context.Background(), "2026-03-01"); err != nil {
		t.Fatal(err)
	}
	srv = newTestServer(t, pub, NewSalts(kv, &countingRandom{next: 50}, discard()), func() time.Time { return now }, nil) // a process started since
	late := post(after.Add(time.Minute), testIP, `{"type":"engagement","site":"example.com","page":"/a","id":"v1","engaged_ms":1,"age_ms":120000}`)
	check(late[0], today, testIP, after.Add(time.Minute))
	if _, err := kv.Get(context.Background(), "2026-03-01"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Errorf("yesterday's salt after the report: %v, want still gone", err)
	}
}

// The pixel carries no engagement: "type" and the numbers are parameters it
// does not read, like any other unknown one.
func TestPixelIgnoresEngagement(t *testing.T) {
	pub := newRecorder(t)
	srv := newTestServer(t, pub, fixedSalt(t, testSalt), func() time.Time { return testNow }, nil)
	checkGIF(t, srv.pixel("site=example.com&page=/a&id=v1&type=engagement&engaged_ms=5000&scroll=50&age_ms=1000"), http.StatusOK)
	checkGIF(t, srv.pixel("site=example.com&page=/b&type=bogus&engaged_ms=-1"), http.StatusOK)
	evs := pub.events()
	if len(evs) != 2 {
		t.Fatalf("%d events", len(evs))
	}
	for _, e := range evs {
		if e.Kind != viewcount.KindView || e.Engagement != (viewcount.Engagement{}) || e.Source != viewcount.SourcePixel {
			t.Errorf("pixel event %s: %v %+v", e.Page, e.Kind, e.Engagement)
		}
	}
	if evs[0].ID != "v1" {
		t.Errorf("id %q", evs[0].ID)
	}
}

// FuzzBeaconEvents posts any body to POST /v1/events: it never panics, it
// answers 202 or a worded 400 or 413, and what it accepts is well formed:
// views without engagement numbers, reports within range, with their
// client's id, neither webdriver nor hints, and the ids of their view's
// day (yesterday's salt is in the bucket, today's is made), events the
// stream codec carries unchanged. The fast path's equality with
// encoding/json on the same class is FuzzFastBeaconMatchesJSON's.
func FuzzBeaconEvents(f *testing.F) {
	for _, s := range fastBeaconCorpus {
		f.Add([]byte(s))
	}
	c := streamtest.Open(f, 1)
	kv, err := c.KV(context.Background(), viewcount.BucketSalts)
	if err != nil {
		f.Fatal(err)
	}
	yesterday := bytes.Repeat([]byte{9}, SaltLen)
	if _, err := kv.Put(context.Background(), testNow.Add(-24*time.Hour).Format(dayKey), yesterday); err != nil {
		f.Fatal(err)
	}
	var keep keeper
	srv := newTestServer(f, &keep, NewSalts(kv, &countingRandom{next: testSalt[0]}, discard()), func() time.Time { return testNow }, nil)
	now := testNow.Truncate(time.Millisecond)
	ip := netip.MustParseAddr(testIP)
	f.Fuzz(func(t *testing.T, body []byte) {
		keep.evs = nil
		w := srv.beacon("text/plain;charset=UTF-8", string(body))
		switch w.Code {
		case http.StatusAccepted:
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
			if msg := errorOf(t, w); msg == "" || msg == "bad request" || len(keep.evs) != 0 {
				t.Fatalf("%q: %d %q, %d events kept", body, w.Code, msg, len(keep.evs))
			}
			return
		default:
			t.Fatalf("%q: %d %s", body, w.Code, w.Body)
		}
		if want := `{"accepted":` + strconv.Itoa(len(keep.evs)) + `}`; w.Body.String() != want || len(keep.evs) == 0 {
			t.Fatalf("%q: %s, %d events kept", body, w.Body, len(keep.evs))
		}
		for i, e := range keep.evs {
			salt := testSalt
			switch e.Kind {
			case viewcount.KindView:
				if e.Engagement != (viewcount.Engagement{}) {
					t.Fatalf("%q: view %d with %+v", body, i, e.Engagement)
				}
			case viewcount.KindEngagement:
				g := e.Engagement
				if e.ID == "" || g.EngagedMS > viewcount.MaxEngagedMS || g.AgeMS > viewcount.MaxEngagedMS || g.Scroll > 100 ||
					e.Webdriver || e.Hints != (viewcount.Hints{}) {
					t.Fatalf("%q: report %d: %+v", body, i, e)
				}
				if dayOf(now.Add(-time.Duration(g.AgeMS)*time.Millisecond)) < dayOf(now) {
					salt = yesterday
				}
			default:
				t.Fatalf("%q: event %d of kind %v", body, i, e.Kind)
			}
			if e.Network != NetworkID(salt, ip) || e.Visitor != VisitorID(salt, e.Site, testIP, chromeUA) || !e.Time.Equal(now) {
				t.Fatalf("%q: event %d: ids not of salt %x, or time %v", body, i, salt[0], e.Time)
			}
		}
		if back, err := viewcount.DecodeEvents(nil, viewcount.AppendEvents(nil, keep.evs)); err != nil || !reflect.DeepEqual(back, keep.evs) {
			t.Fatalf("%q: through the codec: %v\n got %+v\nwant %+v", body, err, back, keep.evs)
		}
	})
}

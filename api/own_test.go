package api

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/feed"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// TestCountsOwnView: a POST's own views are added to the counts that
// certainly lack them, by their stream position against the feed progress
// read after the count: never to a count that may hold them (one over),
// at worst not to one that lacks them (one short, until the next reading).
func TestCountsOwnView(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, _, err := f.sites.Add(ctx, "example.com"); err != nil {
		t.Fatal(err)
	}
	f.views(t, "example.com", "/a", 5)
	fedReads := 0
	fedThrough := func() uint64 { // partition 0's, where the fixture's views are
		t.Helper()
		through, err := feed.FedThrough(ctx, f.store)
		if err != nil || through[0].Through == 0 || through[0].Done != through[0].Through {
			t.Fatalf("feed progress %v %v, want partition 0 fed and done", through, err)
		}
		return through[0].Through
	}
	const path = "/v1/sites/example.com/counts"
	post := func(body string) (*httptest.ResponseRecorder, []pageCount) {
		t.Helper()
		w := f.post(t, path, "text/plain;charset=UTF-8", body)
		var got countsResponse
		if err := json.Unmarshal(w.Body.Bytes(), &got); w.Code != 200 || err != nil {
			t.Fatalf("%s: %d %s", body, w.Code, w.Body)
		}
		return w, got.Counts
	}
	own := func(pages []string, views ...string) string {
		b, _ := json.Marshal(pages)
		var o []string
		for i := 0; i < len(views); i += 2 {
			o = append(o, `{"page":`+strconv.Quote(views[i])+`,"position":`+strconv.Quote(views[i+1])+`}`)
		}
		return `{"pages":` + string(b) + `,"own":[` + strings.Join(o, ",") + `]}`
	}
	check := func(what, body string, want ...uint64) {
		t.Helper()
		w, got := post(body)
		if len(got) != len(want) {
			t.Fatalf("%s: %s", what, w.Body)
		}
		for i := range want {
			if got[i].Own != want[i] {
				t.Errorf("%s: %s, want own %v", what, w.Body, want)
				break
			}
		}
		if cc := w.Header().Get("Cache-Control"); cc != "no-store" || w.Header().Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s: Cache-Control %q, ACAO %q: one reader's answer, for any origin, stored by no cache", what, cc, w.Header().Get("Access-Control-Allow-Origin"))
		}
	}
	at := func(part int, seq uint64) string { return strconv.Itoa(part) + ":" + strconv.FormatUint(seq, 10) }

	// Without feed progress (TrackFeeds) no count is known to lack a view.
	check("no feed progress", own([]string{"/a"}, "/a", "3:1"), 0)
	f.snap.TrackFeeds(func(ctx context.Context) (map[int]feed.Fed, error) {
		fedReads++
		return feed.FedThrough(ctx, f.store)
	})

	fed := fedThrough()
	check("a view after every feed", own([]string{"/a"}, "/a", at(0, fed+1)), 1)
	// Fed, but the reading predates every progress read: it is read
	// again, after the progress that placed the view, and holds it.
	check("a view fed", own([]string{"/a"}, "/a", at(0, fed)), 0)
	check("a view of a partition never fed", own([]string{"/a"}, "/a", "3:1"), 1)
	check("a page as a count's page", own([]string{"/a/"}, "/a/", at(0, fed+1)), 1)
	check("another page's view", own([]string{"/a"}, "/b", at(0, fed+1)), 0)
	check("a page asked twice", own([]string{"/a", "/b", "/a"}, "/a", at(0, fed+1)), 1, 0, 1)
	// A reader's views of one page count once; one that may be counted
	// already stands for all (the rest are its duplicates).
	check("two views, both unfed", own([]string{"/a"}, "/a", at(0, fed+1), "/a", at(1, 7)), 1)
	check("two views, one fed", own([]string{"/a"}, "/a", at(0, fed+1), "/a", at(0, fed)), 0)
	if _, got := post(own([]string{"/a"}, "/a", at(0, fed+1))); got[0].Views != 5 || got[0].Pending != 0 {
		t.Errorf("own views change nothing else: %+v", got[0])
	}
	if w, _ := post(`{"pages":["/a"],"own":[]}`); w.Header().Get("Cache-Control") != "public, max-age=10" || strings.Contains(w.Body.String(), "own") {
		t.Errorf("no own views: %v %s, want the public answer", w.Header(), w.Body)
	}
	// Two progress reads served all of these: one after the first
	// reading, one after the re-read; the progress read before the
	// re-read places every view fed by then.
	if fedReads != 2 {
		t.Errorf("%d feed progress reads, want 2", fedReads)
	}

	// The view is fed after the last progress read: the reading lacks it,
	// and says so (the progress read after the reading predates the feed).
	f.views(t, "example.com", "/a", 1)
	mine := fedThrough()
	if mine <= fed {
		t.Fatalf("feed progress %d after a feed, was %d", mine, fed)
	}
	check("fed after the reading", own([]string{"/a"}, "/a", at(0, mine)), 1)
	if _, got := post(own([]string{"/a"}, "/a", at(0, mine))); got[0].Views != 5 {
		t.Fatalf("the reading changed: %+v", got[0])
	}
	// The next reading may hold it: progress read before that reading
	// must not be taken for it (6 + 1 would be one over). It is read anew,
	// places the view, and the count is read again after it.
	f.clock.t = f.clock.t.Add(f.snap.lag)
	f.snap.refresh(ctx)
	_, got := post(own([]string{"/a"}, "/a", at(0, mine)))
	if got[0].Views != 6 || got[0].Own != 0 {
		t.Errorf("after the refresh: %+v, want 6 views and no own view", got[0])
	}
	if fedReads != 3 {
		t.Errorf("%d feed progress reads, want 3: one per reading asked", fedReads)
	}

	// A page read on demand (stale here, or never read): its reading is
	// newer than any progress read, so progress is read after it; progress
	// read before it places the views fed by then, with no read.
	f.clock.t = f.clock.t.Add(time.Hour)
	check("a view not fed, on a stale page", own([]string{"/a"}, "/a", at(0, mine+1)), 1)
	check("a view fed, on a stale page", own([]string{"/a"}, "/a", at(0, mine)), 0)
	check("a never-read page", own([]string{"/new"}, "/new", at(0, mine+1)), 1)
	if fedReads != 5 {
		t.Errorf("%d feed progress reads, want 5", fedReads)
	}

	// Progress that cannot be read adds no view.
	f.snap.TrackFeeds(func(context.Context) (map[int]feed.Fed, error) { return nil, errors.New("store out") })
	f.clock.t = f.clock.t.Add(time.Hour)
	check("feed progress failing", own([]string{"/a"}, "/a", at(0, mine+1)), 0)
}

func TestCountsOwnBadInput(t *testing.T) {
	f := newFixture(t)
	if _, _, err := f.sites.Add(context.Background(), "example.com"); err != nil {
		t.Fatal(err)
	}
	check := func(body string, code int, msg string) {
		t.Helper()
		w := f.post(t, "/v1/sites/example.com/counts", "application/json", body)
		var e struct{ Error string }
		if err := json.Unmarshal(w.Body.Bytes(), &e); w.Code != code || err != nil || e.Error != msg {
			t.Errorf("%.80s: got %d %s, want %d %q", body, w.Code, w.Body, code, msg)
		}
	}
	views := func(n int, pos string) string {
		o := make([]string, n)
		for i := range o {
			o[i] = `{"page":"/a","position":"` + pos + `"}`
		}
		return `{"pages":["/a"],"own":[` + strings.Join(o, ",") + `]}`
	}
	const shape = `own: want [{"page":"/a","position":"2:18446"}], the position as the beacon answered`
	check(`{"pages":["/a"],"own":{}}`, 400, shape)
	check(`{"pages":["/a"],"own":"0:1"}`, 400, shape)
	check(`{"pages":["/a"],"own":[1]}`, 400, shape)
	check(`{"pages":["/a"],"own":[{"page":"/a","position":5}]}`, 400, shape)
	check(`{"pages":["/a"],"own":[{"page":5,"position":"0:1"}]}`, 400, shape)
	check(`{"pages":[1],"own":[]}`, 400, `body: want {"pages":["/a","/b"]}`)
	check(views(11, "0:1"), 400, "own: at most 10 views, got 11")
	const badPos = `own[0].position: want "partition:sequence" as the beacon answered, e.g. "2:18446"`
	for _, pos := range []string{"", "0", "0:0", "-1:5", "1:2:3", "65536:1", "0:18446744073709551616", " 0:1", "0:1x"} {
		check(views(1, pos), 400, badPos)
	}
	check(`{"pages":["/a"],"own":[{"position":"0:1"}]}`, 400, "own[0].page: bad input: empty page")
	check(`{"pages":["/a"],"own":[{"page":"/a","position":"0:1"},{"page":"/\u0000","position":"0:1"}]}`, 400, "own[1].page: bad input: control character")
	check(`{"pages":["/a"],"own":[{"page":"/`+strings.Repeat("x", 2048)+`","position":"0:1"}]}`, 400, "own[0].page: longer than 2048 bytes")
	// The pages are checked too, and a bad body is refused before the
	// snapshot is asked.
	check(`{"pages":[],"own":[{"page":"/a","position":"0:1"}]}`, 400, "pages: at least one page is required")
	if n := len(f.snap.entries); n != 0 {
		t.Errorf("bad requests put %d pages in the snapshot", n)
	}
	// Ten own views are the limit, not beyond it; unknown fields are
	// ignored, as in the pages.
	if w := f.post(t, "/v1/sites/example.com/counts", "application/json", views(10, "65535:18446744073709551615")); w.Code != 200 {
		t.Errorf("10 own views: %d %s", w.Code, w.Body)
	}
	if w := f.post(t, "/v1/sites/example.com/counts", "application/json", `{"pages":["/a"],"own":[{"page":"/a","position":"0:1","id":"x"}],"x":1}`); w.Code != 200 {
		t.Errorf("unknown fields: %d %s", w.Code, w.Body)
	}
}

// TestCountsOwnViewFedDuringRead: the reader's view is fed after the count
// was read and before the progress read that follows it. That progress
// covers the view, so the count is in doubt; it is read again and holds
// the view (no answer one short, which was how the end-to-end "reload at
// once" test failed under load).
func TestCountsOwnViewFedDuringRead(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, _, err := f.sites.Add(ctx, "example.com"); err != nil {
		t.Fatal(err)
	}
	f.views(t, "example.com", "/a", 5)
	f.snap.TrackFeeds(func(ctx context.Context) (map[int]feed.Fed, error) { return feed.FedThrough(ctx, f.store) })
	post := func(seq uint64) pageCount { t.Helper(); return f.postOwn(t, seq) }
	mine := f.seq + 1 // the next view's position
	if got := post(mine); got.Views != 5 || got.Own != 1 {
		t.Fatalf("before the feed: %+v, want 5 views and the own view", got)
	}
	// A reading newer than every progress read (the last is stale, so
	// the next read fetches), then the feed lands while progress is read.
	f.clock.t = f.clock.t.Add(time.Hour)
	f.snap.TrackFeeds(func(ctx context.Context) (map[int]feed.Fed, error) {
		if f.seq < mine {
			f.views(t, "example.com", "/a", 1)
		}
		return feed.FedThrough(ctx, f.store)
	})
	if got := post(mine); got.Views+got.Own != 6 || got.Own != 0 {
		t.Errorf("fed during the progress read: %+v, want 6 views, the own view among them", got)
	}
}

// TestCountsOwnViewProperty drives readings, refreshes, feeds (some landing
// while progress is read, some recorded and run at a later progress read)
// and own views of every position in a random
// order, and checks each answer against what was fed: an answer without
// the own view holds it (the count includes every view up to it, feeds
// being in order), and one with it lacks it (never one over).
func TestCountsOwnViewProperty(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, _, err := f.sites.Add(ctx, "example.com"); err != nil {
		t.Fatal(err)
	}
	f.views(t, "example.com", "/a", 1)
	first := f.seq // views at positions first..f.seq, one each
	feedDuring := false
	var running *feed.Range // a feed recorded and not run
	rng := rand.New(rand.NewPCG(1, 2))
	views := func() {
		f.views(t, "example.com", "/a", 1)
		running = nil // CatchUp redoes the latest feed first
	}
	f.snap.TrackFeeds(func(ctx context.Context) (map[int]feed.Fed, error) {
		switch {
		case feedDuring:
			views()
		case running != nil && rng.IntN(2) == 0:
			if err := feed.Copy(ctx, f.store, *running); err != nil {
				return nil, err
			}
			running = nil
		}
		return feed.FedThrough(ctx, f.store)
	})
	for step := range 120 {
		feedDuring = false
		switch rng.IntN(7) {
		case 0:
			views()
		case 3:
			if running == nil {
				r := f.viewRunning(t, "example.com", "/a")
				running = &r
			}
		case 1:
			f.clock.t = f.clock.t.Add(f.snap.lag)
			f.snap.refresh(ctx)
		case 2:
			f.clock.t = f.clock.t.Add(time.Hour) // stale: the next read fetches
		default:
			feedDuring = rng.IntN(3) == 0
			seq := first + uint64(rng.IntN(int(f.seq-first)+2)) // up to the next view's
			if rng.IntN(2) == 0 {
				seq = f.seq // the newest, most often the reader's
			}
			c := f.postOwn(t, seq)
			upTo := seq - first + 1 // views at positions up to the own view's
			switch {
			case c.Own == 0 && c.Views < upTo:
				t.Fatalf("step %d: own view at %d (views %d..%d fed): %+v lacks it, said it holds it", step, seq, first, f.seq, c)
			case c.Own == 1 && c.Views >= upTo:
				t.Fatalf("step %d: own view at %d (views %d..%d fed): %+v holds it, added it again", step, seq, first, f.seq, c)
			}
		}
	}
}

// TestCountsOwnViewFeedRunning: the reader's view is in a feed recorded and
// not yet run. The answer waits for the feed (it runs on the second
// progress read) and holds the view; a feed that never runs leaves it one
// short after ownWait, never one over.
func TestCountsOwnViewFeedRunning(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, _, err := f.sites.Add(ctx, "example.com"); err != nil {
		t.Fatal(err)
	}
	f.views(t, "example.com", "/a", 5)
	post := func(seq uint64) pageCount { t.Helper(); return f.postOwn(t, seq) }

	r := f.viewRunning(t, "example.com", "/a")
	reads := 0
	f.snap.TrackFeeds(func(ctx context.Context) (map[int]feed.Fed, error) {
		if reads++; reads == 2 {
			if err := feed.Copy(ctx, f.store, r); err != nil {
				return nil, err
			}
		}
		return feed.FedThrough(ctx, f.store)
	})
	if got := post(f.seq); got.Views != 6 || got.Own != 0 {
		t.Errorf("own view in a running feed: %+v, want 6 views, the own view among them", got)
	}
	if reads != 2 {
		t.Errorf("%d progress reads, want 2: one finding the feed running, one finding it done", reads)
	}

	f.snap.ownWait = 50 * time.Millisecond
	f.snap.TrackFeeds(func(ctx context.Context) (map[int]feed.Fed, error) { return feed.FedThrough(ctx, f.store) })
	f.viewRunning(t, "example.com", "/a") // and never run
	f.clock.t = f.clock.t.Add(time.Hour)
	if got := post(f.seq); got.Views != 6 || got.Own != 0 {
		t.Errorf("own view in a feed that never runs: %+v, want 6 views and no own view (one short)", got)
	}
}

// viewRunning stores one valid view of site+page and records its feed
// without running it: the state while a feed runs.
func (f *fixture) viewRunning(t *testing.T, site, page string) feed.Range {
	t.Helper()
	ctx := context.Background()
	f.seq++
	rows := []viewcount.Verdict{{Event: viewcount.Event{Time: f.clock.t, Site: site, Page: page, UA: "Mozilla/5.0",
		Visitor: f.seq << 32, Source: viewcount.SourcePixel}, Reason: viewcount.Valid, Seq: f.seq}}
	if err := storetest.NumberBatch(ctx, f.store, rows); err != nil {
		t.Fatal(err)
	}
	if err := f.store.InsertViews(ctx, "", rows); err != nil {
		t.Fatal(err)
	}
	fed, err := feed.Progress(ctx, f.store)
	if err != nil {
		t.Fatal(err)
	}
	r := feed.Range{Partition: 0, First: fed[0].Last + 1, Last: rows[0].Batch}
	if err := feed.Record(ctx, f.store, r); err != nil {
		t.Fatal(err)
	}
	return r
}

// postOwn asks example.com's count of /a with one own view of /a at
// partition 0's seq, and returns the count.
func (f *fixture) postOwn(t *testing.T, seq uint64) pageCount {
	t.Helper()
	w := f.post(t, "/v1/sites/example.com/counts", "text/plain", `{"pages":["/a"],"own":[{"page":"/a","position":"0:`+strconv.FormatUint(seq, 10)+`"}]}`)
	var got countsResponse
	if err := json.Unmarshal(w.Body.Bytes(), &got); w.Code != 200 || err != nil || len(got.Counts) != 1 {
		t.Fatalf("own view at 0:%d: %d %s", seq, w.Code, w.Body)
	}
	return got.Counts[0]
}

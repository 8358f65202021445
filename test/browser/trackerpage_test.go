//go:build !race

package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/test/apptest"
)

// pageRecorder is the test pages' script before vc.js: what the page
// sends by sendBeacon (window.sent) and its visibility changes and
// pagehide (window.seen), by its own clock, for a test to read back;
// visibleSince(t0, t1) sums the time it was visible; and a report to its
// server, /ran, once it has loaded, saying whether it is prerendered.
const pageRecorder = `<script>window.sent = []; window.seen = [];
	var beacon = navigator.sendBeacon.bind(navigator);
	navigator.sendBeacon = function (u, b) { sent.push({ t: performance.now(), body: String(b) }); return beacon(u, b); };
	function see(s) { seen.push({ t: performance.now(), state: s }); }
	document.addEventListener('visibilitychange', function () { see(document.visibilityState); });
	addEventListener('pagehide', function () { see('pagehide'); });
	// The time the page was visible from t0 (it was then) to t1 (now).
	window.visibleSince = function (t0, t1) {
		var from = t0, sum = 0;
		t1 = t1 || performance.now();
		seen.forEach(function (s) {
			if (s.t < t0 || s.t > t1) return;
			if (s.state == 'hidden' && from >= 0) { sum += s.t - from; from = -1; }
			if (s.state == 'visible') from = s.t;
		});
		return sum + (from >= 0 ? t1 - from : 0);
	};
	addEventListener('load', function () { fetch('/ran?page=' + location.pathname + '&prerendering=' + !!document.prerendering); });</script>`

// until polls a JavaScript condition in the page of ctx, from the test:
// a poll run in the page (chromedp.Poll) is lost when the back-forward
// cache swaps the document it runs in for another, and a hidden page
// draws no frames for one to run on.
func until(t *testing.T, ctx context.Context, d time.Duration, js string) {
	t.Helper()
	apptest.Eventually(t, d, func() string {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js)); err != nil || !ok {
			return fmt.Sprintf("%s: %v (%v)", js, ok, err)
		}
		return ""
	})
}

// waitSent waits until the page in ctx has sent n beacons and returns the
// last.
func waitSent(t *testing.T, ctx context.Context, n int, what string) sentBeacon {
	t.Helper()
	until(t, ctx, 10*time.Second, fmt.Sprintf(`sent.length >= %d`, n))
	sent := pageSent(t, ctx)
	if len(sent) != n {
		t.Fatalf("%s: sent %v, want %d beacons", what, sent, n)
	}
	return sent[n-1]
}

// trackerEvent is an event as vc.js sends it: a view (Type "") or an
// engagement.
type trackerEvent struct {
	Type      string `json:"type"`
	Site      string `json:"site"`
	Page      string `json:"page"`
	Referrer  string `json:"referrer"`
	ID        string `json:"id"`
	Host      string `json:"host"`
	EngagedMS *int   `json:"engaged_ms"`
	Scroll    int    `json:"scroll"`
	AgeMS     int    `json:"age_ms"`
}

func (e trackerEvent) String() string {
	b, _ := json.Marshal(e)
	return string(b)
}

// sentBeacon is one sendBeacon call of a page, at t by its clock.
type sentBeacon struct {
	t    float64
	body string
	ev   trackerEvent
}

func (b sentBeacon) String() string { return fmt.Sprintf("%.0f %s", b.t, b.body) }

// pageSent reads what the page in ctx sent by sendBeacon (window.sent).
func pageSent(t *testing.T, ctx context.Context) []sentBeacon {
	t.Helper()
	raw := pageEval[[]struct {
		T    float64 `json:"t"`
		Body string  `json:"body"`
	}](t, ctx, `sent`)
	out := make([]sentBeacon, len(raw))
	for i, r := range raw {
		out[i] = sentBeacon{t: r.T, body: r.Body}
		if err := json.Unmarshal([]byte(r.Body), &out[i].ev); err != nil {
			t.Fatalf("beacon %q: %v", r.Body, err)
		}
	}
	return out
}

func pageEval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// pageLog records what the test's pages reported.
type pageLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *pageLog) add(s string) {
	l.mu.Lock()
	l.seen = append(l.seen, s)
	l.mu.Unlock()
}

func (l *pageLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.seen)
}

// viewsStream returns a reader of every event the VIEWS stream on the NATS
// server at natsURL holds, in stream order.
func viewsStream(t *testing.T, natsURL string) func() []viewcount.Event {
	t.Helper()
	nc, err := nats.Connect(natsURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return func() []viewcount.Event {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s, err := js.Stream(ctx, viewcount.StreamName)
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var evs []viewcount.Event
		for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
			msg, err := s.GetMsg(ctx, seq)
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				continue
			}
			if err != nil {
				t.Fatalf("message %d: %v", seq, err)
			}
			if evs, err = viewcount.DecodeEvents(evs, msg.Data); err != nil {
				t.Fatalf("message %d on %s: %v", seq, msg.Subject, err)
			}
		}
		return evs
	}
}

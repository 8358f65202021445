//go:build faults

package faults

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/viewcount/viewcount/cmd/vcdev/loadgen"
	"github.com/viewcount/viewcount/ingest"
)

// Real browsers' user agents, with the hints vc.js reports from each on a
// secure page (Chromium browsers have navigator.userAgentData, Firefox and
// Safari do not), so the bad_hints rule has nothing to object to.
var browsers = []struct {
	ua  string
	uad bool
}{
	{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/143.0.0.0 Safari/537.36", true},
	{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36", true},
	{"Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/143.0.0.0 Mobile Safari/537.36", true},
	{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36 Edg/142.0.0.0", true},
	{"Mozilla/5.0 (iPhone; CPU iPhone OS 18_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.1 Mobile/15E148 Safari/604.1", false},
	{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.1 Safari/605.1.15", false},
	{"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:145.0) Gecko/20100101 Firefox/145.0", false},
	{"Mozilla/5.0 (X11; Linux x86_64; rv:145.0) Gecko/20100101 Firefox/145.0", false},
}

// loadConfig sizes the steady load. Visitors are spread so that no rule
// rejects them: 20 per /24 (the network rate and rotation rules see at
// most 20 people), each visitor's requests serial and a page never
// repeated (no duplicate), one request per visitor every
// visitors/rate seconds (far under the visitor rate).
type loadConfig struct {
	site     string
	visitors int
	workers  int
	rate     float64 // requests per second in all
	prefix   string  // event id prefix: unique per scenario and seed
}

type visitor struct {
	ip      string
	browser int
	pages   int
	// The visitor's last view sent by the beacon, which its next beacon
	// batch may report engagement for, as vc.js does when the page is
	// hidden: acked is when the view was acknowledged (its server time is
	// earlier), engaged what the last report said.
	view struct {
		id, page string
		acked    time.Time
		engaged  int64
	}
}

// report is an engagement report the load sent, by its view's id.
type report struct {
	id      string
	engaged int64
}

// load sends pixel hits and beacon batches, each retried with the same
// event ids until the server answers 200/202, and records the ids it
// acknowledged.
type load struct {
	cfg  loadConfig
	base string
	hc   *http.Client

	mu      sync.Mutex
	acked   map[string]int  // id → acknowledgements (a retry after a lost answer may ack twice)
	reports map[report]bool // engagement reports acknowledged
	gaveUp  map[string]bool // ids of pending
	pending []request       // requests given up on, unacknowledged
	refused []string        // 4xx answers other than 429: a harness bug, fails the scenario

	attempts, retries atomic.Int64
	stop              chan struct{}
	giveUpAt          atomic.Int64 // unix nanos after which a request stops retrying
	wg                sync.WaitGroup
}

func startLoad(base string, cfg loadConfig, rng *rand.Rand) *load {
	l := &load{cfg: cfg, base: base, acked: map[string]int{}, reports: map[report]bool{}, gaveUp: map[string]bool{}, stop: make(chan struct{}),
		hc: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: cfg.workers}}}
	l.giveUpAt.Store(time.Now().Add(24 * time.Hour).UnixNano())
	vs := make([]visitor, cfg.visitors)
	for i := range vs {
		net := i / 20
		vs[i] = visitor{ip: fmt.Sprintf("10.%d.%d.%d", net/256, net%256, i%20+1), browser: rng.IntN(len(browsers))}
	}
	for w := range cfg.workers {
		var mine []*visitor
		for i := w; i < len(vs); i += cfg.workers {
			mine = append(mine, &vs[i])
		}
		wrng := rand.New(rand.NewPCG(rng.Uint64(), uint64(w)))
		l.wg.Add(1)
		go l.worker(mine, wrng)
	}
	return l
}

func (l *load) worker(vs []*visitor, rng *rand.Rand) {
	defer l.wg.Done()
	every := time.Duration(float64(time.Second) * float64(l.cfg.workers) / l.cfg.rate)
	tick := time.NewTicker(every)
	defer tick.Stop()
	// Visitors whose last beacon view awaits its engagement report: vc.js
	// sends one when the page is hidden, seconds to minutes after the view,
	// so it comes back at one of the worker's next ticks.
	var reporting []*visitor
	for i := 0; ; i++ {
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
		if len(reporting) > 0 && rng.IntN(3) == 0 {
			j := rng.IntN(len(reporting))
			v := reporting[j]
			reporting = append(reporting[:j], reporting[j+1:]...)
			l.report(v, rng)
			continue
		}
		v := vs[i%len(vs)]
		if rng.IntN(2) == 0 {
			id := l.id(v)
			l.send(request{l.pixel(v, id), []string{id}, nil})
			continue
		}
		n := 1 + rng.IntN(4)
		evs := make([]ingest.BeaconEvent, n, n+1)
		ids := make([]string, n)
		for j := range evs {
			ids[j] = l.id(v)
			evs[j] = ingest.BeaconEvent{Site: l.cfg.site, Page: l.page(v, ids[j]), ID: ids[j],
				Referrer: "https://news.example.org/",
				Hints:    &ingest.BeaconHints{ScreenW: 1920, ScreenH: 1080, Languages: 2, TZ: true, UAData: browsers[v.browser].uad, Secure: true}}
		}
		// A visitor coming back reports on its last beacon view in the
		// same batch.
		var reports []report
		if v.view.id != "" && rng.IntN(2) == 0 {
			ev, r := l.reportOf(v, rng)
			evs, reports = append(evs, ev), append(reports, r)
		}
		body, _ := json.Marshal(evs)
		if l.send(l.beacon(v, body, ids, reports)) {
			v.view.id, v.view.page, v.view.acked, v.view.engaged = ids[n-1], evs[n-1].Page, time.Now(), 0
			if rng.IntN(2) == 0 {
				reporting = append(reporting, v)
			}
		}
	}
}

// reportOf is the engagement report of v's last beacon view, with no more
// engaged time than passed since it was acknowledged (its server time is
// earlier), so no report is an overclaim however late the view was
// stored, and more than the last report said.
func (l *load) reportOf(v *visitor, rng *rand.Rand) (ingest.BeaconEvent, report) {
	age := time.Since(v.view.acked).Milliseconds()
	engaged := min(age, v.view.engaged+1+rng.Int64N(5000))
	scroll := rng.Int64N(101)
	v.view.engaged = engaged
	return ingest.BeaconEvent{Type: "engagement", Site: l.cfg.site, Page: v.view.page, ID: v.view.id,
		Referrer: "https://news.example.org/", EngagedMS: &engaged, Scroll: &scroll, AgeMS: &age}, report{v.view.id, engaged}
}

// report sends a report on v's last beacon view alone, as vc.js does when
// the page is hidden.
func (l *load) report(v *visitor, rng *rand.Rand) {
	ev, r := l.reportOf(v, rng)
	body, _ := json.Marshal([]ingest.BeaconEvent{ev})
	l.send(l.beacon(v, body, nil, []report{r}))
}

func (l *load) beacon(v *visitor, body []byte, ids []string, reports []report) request {
	return request{func() *http.Request {
		req, _ := http.NewRequest("POST", l.base+"/v1/events", bytes.NewReader(body))
		req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
		return l.headers(req, v)
	}, ids, reports}
}

// id gives the visitor's next event id (and, through it, its next page).
func (l *load) id(v *visitor) string {
	v.pages++
	return fmt.Sprintf("%s.%s.%d", l.cfg.prefix, strings.ReplaceAll(v.ip, ".", "-"), v.pages)
}

// page is unique per event, so the duplicate (reload) rule never applies.
func (l *load) page(_ *visitor, id string) string { return "/p/" + id }

func (l *load) pixel(v *visitor, id string) func() *http.Request {
	q := url.Values{"site": {l.cfg.site}, "page": {l.page(v, id)}, "id": {id}}
	u := l.base + "/p.gif?" + q.Encode()
	return func() *http.Request {
		req, _ := http.NewRequest("GET", u, nil)
		return l.headers(req, v)
	}
}

func (l *load) headers(req *http.Request, v *visitor) *http.Request {
	req.Header.Set("X-Forwarded-For", v.ip)
	req.Header.Set("User-Agent", browsers[v.browser].ua)
	loadgen.SetBrowserHeaders(req.Header, browsers[v.browser].ua, req.Method == http.MethodPost)
	return req
}

// request is one HTTP request of the load, remade for each attempt.
type request struct {
	make    func() *http.Request
	ids     []string
	reports []report
}

// send retries one request with the same ids until it is acknowledged.
// 503, 429, timeouts, resets and refused connections are what a browser's
// retry would meet while the server is degraded or down. A request still
// unacknowledged at the give-up time is kept for resend.
func (l *load) send(r request) (acked bool) {
	backoff := 50 * time.Millisecond
	for {
		l.attempts.Add(1)
		code, err := l.do(r.make())
		switch {
		case err == nil && (code == http.StatusOK || code == http.StatusAccepted):
			l.mu.Lock()
			for _, id := range r.ids {
				l.acked[id]++
				delete(l.gaveUp, id)
			}
			for _, rep := range r.reports {
				l.reports[rep] = true
			}
			l.mu.Unlock()
			return true
		case err == nil && code >= 400 && code < 500 && code != http.StatusTooManyRequests && code != http.StatusRequestTimeout:
			l.mu.Lock()
			l.refused = append(l.refused, fmt.Sprintf("%d for %v %v", code, r.ids, r.reports))
			l.mu.Unlock()
			return
		}
		if time.Now().UnixNano() > l.giveUpAt.Load() {
			l.mu.Lock()
			for _, id := range r.ids {
				l.gaveUp[id] = true
			}
			l.pending = append(l.pending, r)
			l.mu.Unlock()
			return
		}
		l.retries.Add(1)
		time.Sleep(backoff)
		backoff = min(2*backoff, time.Second)
	}
}

// resend retries the requests given up on (after a restart), each until
// acknowledged or d has passed.
func (l *load) resend(d time.Duration) {
	l.giveUpAt.Store(time.Now().Add(d).UnixNano())
	l.mu.Lock()
	rs := l.pending
	l.pending = nil
	l.mu.Unlock()
	for _, r := range rs {
		l.send(r)
	}
}

func (l *load) gaveUpCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.gaveUp)
}

func (l *load) do(req *http.Request) (int, error) {
	resp, err := l.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// finish stops new requests and lets those in flight retry until deadline.
func (l *load) finish(deadline time.Duration) {
	l.giveUpAt.Store(time.Now().Add(deadline).UnixNano())
	close(l.stop)
	l.wg.Wait()
	l.hc.CloseIdleConnections()
}

func (l *load) ackedCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

//go:build !race

package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/viewcount/viewcount/cmd/vcdev/loadgen"
	"github.com/viewcount/viewcount/ingest"
)

// clusterBrowsers are real browsers' user agents with what vc.js reports
// of each (Chromium has navigator.userAgentData), so no rule objects.
var clusterBrowsers = []struct {
	ua  string
	uad bool
}{
	{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/143.0.0.0 Safari/537.36", true},
	{"Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/143.0.0.0 Mobile Safari/537.36", true},
	{"Mozilla/5.0 (iPhone; CPU iPhone OS 18_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.1 Mobile/15E148 Safari/604.1", false},
	{"Mozilla/5.0 (X11; Linux x86_64; rv:145.0) Gecko/20100101 Firefox/145.0", false},
}

// clusterLoad sends hits number 0..n-1 at a steady rate, alternately to
// each ingest process, pixel and beacon in turn. Hits 2j and 2j+1 are
// visitor j's (20 visitors to a /24, so no rate or rotation rule
// applies), one through each ingest process, so both must derive the
// same visitor id (the day's salt is shared through the stream). Hit i
// views page /p/<i mod pages> under event id k<i>. A hit is retried with the same id
// until it is acknowledged (200/202): an answer lost or refused while a
// node is down may still have stored it, and the validators then reject
// the retry as duplicate_id, so every id counts once.
type clusterLoad struct {
	site  string
	bases []string
	n     int
	pages int
	hc    *http.Client

	mu      sync.Mutex
	acked   map[string]string // id → page
	perPage map[string]int    // acknowledged hits per page
	codes   map[int]int       // answers other than 200/202, by status
	errs    map[string]int    // transport errors, by ingest process
	gaveUp  []string          // ids never acknowledged: refused, or still failing at the deadline
	slowest time.Duration     // longest time from first try to acknowledgement

	ackedN   atomic.Int64
	attempts atomic.Int64
	giveUpAt time.Time
	wg       sync.WaitGroup
}

func startClusterLoad(site string, bases []string, n, pages, workers int, rate float64, giveUp time.Duration) *clusterLoad {
	l := &clusterLoad{site: site, bases: bases, n: n, pages: pages, acked: map[string]string{}, perPage: map[string]int{},
		codes: map[int]int{}, errs: map[string]int{}, giveUpAt: time.Now().Add(giveUp),
		hc: &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}}
	next := make(chan int)
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer close(next)
		tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
		defer tick.Stop()
		for i := range n {
			<-tick.C
			next <- i
		}
	}()
	for range workers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := range next {
				l.send(i)
			}
		}()
	}
	return l
}

// wait returns once every hit was acknowledged or given up on.
func (l *clusterLoad) wait() { l.wg.Wait() }

func (l *clusterLoad) request(i int) *http.Request {
	j := i / 2 // the visitor
	b := clusterBrowsers[j%len(clusterBrowsers)]
	id, page := "k"+strconv.Itoa(i), "/p/"+strconv.Itoa(i%l.pages)
	base := l.bases[i%len(l.bases)]
	var req *http.Request
	if i%2 == 0 {
		q := url.Values{"site": {l.site}, "page": {page}, "id": {id}}
		req, _ = http.NewRequest("GET", base+"/p.gif?"+q.Encode(), nil)
	} else {
		body, _ := json.Marshal(ingest.BeaconEvent{Site: l.site, Page: page, ID: id, Referrer: "https://news.example.org/",
			Hints: &ingest.BeaconHints{ScreenW: 1920, ScreenH: 1080, Languages: 2, TZ: true, UAData: b.uad, Secure: true}})
		req, _ = http.NewRequest("POST", base+"/v1/events", bytes.NewReader(body))
		req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
	}
	nw := j / 20
	req.Header.Set("X-Forwarded-For", fmt.Sprintf("10.%d.%d.%d", 100+nw/256, nw%256, j%20+1))
	req.Header.Set("User-Agent", b.ua)
	loadgen.SetBrowserHeaders(req.Header, b.ua, req.Method == http.MethodPost)
	return req
}

func (l *clusterLoad) send(i int) {
	id, page := "k"+strconv.Itoa(i), "/p/"+strconv.Itoa(i%l.pages)
	first := time.Now()
	backoff := 50 * time.Millisecond
	for {
		l.attempts.Add(1)
		req := l.request(i)
		resp, err := l.hc.Do(req)
		code := 0
		if err == nil {
			code = resp.StatusCode
			resp.Body.Close()
		}
		l.mu.Lock()
		switch {
		case code == http.StatusOK || code == http.StatusAccepted:
			l.acked[id] = page
			l.perPage[page]++
			l.slowest = max(l.slowest, time.Since(first))
			l.mu.Unlock()
			l.ackedN.Add(1)
			return
		case err != nil:
			l.errs[req.URL.Host]++
		default:
			l.codes[code]++
		}
		// A 4xx other than 429 is the harness's mistake: retrying it only
		// hides it until the deadline.
		if refused := code >= 400 && code < 500 && code != http.StatusTooManyRequests; refused || time.Now().After(l.giveUpAt) {
			l.gaveUp = append(l.gaveUp, id)
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
		time.Sleep(backoff)
		backoff = min(2*backoff, time.Second)
	}
}

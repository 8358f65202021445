package loadgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/viewcount/viewcount/ingest"
)

func (h *Hit) beaconEvent() ingest.BeaconEvent {
	return ingest.BeaconEvent{Site: h.Site, Page: h.Page, Referrer: h.Referrer, ID: h.ID, Webdriver: h.Webdriver, Hints: h.Hints}
}

// Request builds the HTTP request of the hit against the server at base
// ("http://host:port"): GET /p.gif?site&page&ref&id[&wd=1] or POST
// /v1/events with one JSON object (text/plain, as navigator.sendBeacon sends
// it). The hit's IP goes into X-Forwarded-For, so the server must trust the
// load generator's address as a proxy (--trusted-proxies); its id is always
// set, so verdicts can be joined back to the hit.
func (h Hit) Request(base string) (*http.Request, error) {
	base = strings.TrimRight(base, "/")
	var req *http.Request
	var err error
	if h.Beacon {
		body, merr := json.Marshal(h.beaconEvent())
		if merr != nil {
			return nil, fmt.Errorf("loadgen: encoding hit %s: %w", h.ID, merr)
		}
		req, err = http.NewRequest(http.MethodPost, base+"/v1/events", bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
		}
	} else {
		q := url.Values{"site": {h.Site}, "page": {h.Page}, "ref": {h.Referrer}, "id": {h.ID}}
		if h.Webdriver {
			q.Set("wd", "1")
		}
		req, err = http.NewRequest(http.MethodGet, base+"/p.gif?"+q.Encode(), nil)
	}
	if err != nil {
		return nil, fmt.Errorf("loadgen: request for hit %s: %w", h.ID, err)
	}
	h.setHeaders(req)
	return req, nil
}

// BatchRequest builds one POST /v1/events (application/json) carrying every
// hit as an array element. One request has one client: User-Agent and
// X-Forwarded-For are the first hit's, so a batch of hits from different
// visitors measures the batch path's throughput, not filtering.
func BatchRequest(base string, hits []Hit) (*http.Request, error) {
	if len(hits) == 0 {
		return nil, errors.New("loadgen: empty batch")
	}
	evs := make([]ingest.BeaconEvent, len(hits))
	for i := range hits {
		evs[i] = hits[i].beaconEvent()
	}
	body, err := json.Marshal(evs)
	if err != nil {
		return nil, fmt.Errorf("loadgen: encoding batch: %w", err)
	}
	req, err := http.NewRequest(http.MethodPost, strings.TrimRight(base, "/")+"/v1/events", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("loadgen: batch request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	hits[0].setHeaders(req)
	return req, nil
}

func (h *Hit) setHeaders(req *http.Request) {
	// An empty User-Agent header makes net/http send none at all, rather
	// than its own "Go-http-client/1.1".
	req.Header.Set("User-Agent", h.UA)
	if h.IP != "" {
		req.Header.Set("X-Forwarded-For", h.IP)
	}
}

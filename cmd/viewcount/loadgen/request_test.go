package loadgen

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
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
	batch := sent[:50]
	req, err := BatchRequest(srv.URL, batch)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
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
	if _, err := BatchRequest("http://127.0.0.1:1", nil); err == nil {
		t.Fatal("empty batch accepted")
	}
}

package ingest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/viewcount/viewcount"
)

// MaxBeaconEvents is the most events one POST /v1/events may carry.
const MaxBeaconEvents = 100

// Hit is one event as a client reported it, a view or an engagement
// report: decoded from a request, not yet normalised or trusted.
type Hit struct {
	Site      string
	Page      string
	Referrer  string
	ID        string // the client's event id; empty: ingest makes one
	Webdriver bool
	Hints     viewcount.Hints // from the beacon's "hints" object; zero if absent
	// Host is the page's host as the tracker reported it (vc.js sends
	// location.hostname); evidence of the page only when the request's
	// headers give none (pageOrigin).
	Host string
	// Report is what the beacon's event says of engagement: its type and
	// numbers as sent, unchecked (Handler.event checks them). nil when it
	// says nothing, as every view vc.js sends says, so that a view costs
	// no more than before engagements existed (BenchmarkBeacon).
	Report *WireReport
}

// WireReport is an event object's "type" and engagement numbers as sent
// (docs/engagement.md). Type "" (absent) or "view" is a view, which must
// carry none of the numbers; "engagement" is an engagement report; any
// other is refused.
type WireReport struct {
	Type                     string
	EngagedMS, Scroll, AgeMS WireInt
}

// WireInt is a whole number as a client sent it, and whether it sent one
// (JSON null is sending none).
type WireInt struct {
	V   int64
	Set bool
}

// client is what ingest knows of the requester. It exists only for the
// duration of a request: the IP is hashed into the event, never copied.
type client struct {
	IP      netip.Addr            // invalid if the peer address was unparseable
	UA      string                // normalised (capped)
	Country string                // ISO 3166-1 alpha-2 or ""; see Handler.country
	Headers viewcount.HeaderFlags // see requestFlags
	ASN     uint32                // the address's autonomous system; 0 unknown
	Origin  string                // the page's host by the Origin or Referer header (pageOrigin); "" if neither says
}

// requestError is a client's mistake, worded for the client: its message
// names the field ("events[3].page: required") and is sent as is. kind is
// ErrBadInput, ErrTooLarge or ErrUnsupportedType.
type requestError struct {
	kind error
	msg  string
}

func (e *requestError) Error() string { return e.msg }
func (e *requestError) Unwrap() error { return e.kind }

func badInput(format string, args ...any) error {
	return &requestError{kind: ErrBadInput, msg: fmt.Sprintf(format, args...)}
}

// accept turns hits into events and returns once they are durable, with
// where they are (EventPublisher). field names a hit in error messages.
// The whole request is rejected if any hit is bad: nothing is published
// then.
func (h *Handler) accept(ctx context.Context, hits []Hit, field func(i int) string, src viewcount.Source, cl client) (viewcount.StreamPosition, error) {
	now := h.now().UTC().Truncate(time.Millisecond)
	evs := make([]viewcount.Event, len(hits))
	for i := range hits {
		if err := h.event(&evs[i], &hits[i], field, i, src, cl.UA, now); err != nil {
			return viewcount.StreamPosition{}, err
		}
		// A batch's events usually share a referrer: parse it once.
		if i > 0 && hits[i].Referrer == hits[i-1].Referrer {
			evs[i].Referrer = evs[i-1].Referrer
		} else {
			evs[i].Referrer = NormaliseReferrer(hits[i].Referrer)
		}
	}
	h.metrics.Received.Add(uint64(len(evs)))
	salt, err := h.salts.For(ctx, now)
	if err != nil {
		return viewcount.StreamPosition{}, h.noSalt(len(evs), err)
	}
	// The visitor id's low 32 bits (its partition) come from the /24 or
	// the /32 (PartitionKey), under the salt of the event's day: today's,
	// or for an engagement its view's (viewDay).
	today := idsOf(dayOf(now), salt, cl.IP)
	var earlier dayIDs
	// The datacenter check is the one rule that needs the IP itself, so it
	// runs here, before the address is dropped.
	datacenter := cl.IP.IsValid() && h.cfg.Datacenter != nil && h.cfg.Datacenter.Contains(cl.IP)
	var v uint64
	var vids *dayIDs // the ids v was hashed under
	for i := range evs {
		ids := &today
		if evs[i].Kind == viewcount.KindEngagement {
			if ids, err = h.viewDay(ctx, now, &evs[i], cl.IP, &today, &earlier); err != nil {
				return viewcount.StreamPosition{}, h.noSalt(len(evs), err)
			}
		}
		// One request has one client, so the visitor changes only with
		// the site and the day: hash once per run of events of the same
		// site and salt.
		if i == 0 || evs[i].Site != evs[i-1].Site || ids != vids {
			if cl.IP.IsValid() {
				v = visitorID(ids.salt, evs[i].Site, cl.IP, cl.UA)
			} else {
				v = visitorHash(ids.salt, evs[i].Site, nil, cl.UA)
			}
			vids = ids
		}
		evs[i].Visitor = viewcount.NetworkKey(v, ids.key)
		evs[i].Network = ids.network
		evs[i].Datacenter = datacenter
		evs[i].Country = cl.Country
		evs[i].Headers = cl.Headers
		evs[i].ASN = cl.ASN
		evs[i].Origin = cl.Origin
		if cl.Origin == "" && hits[i].Host != "" {
			evs[i].Origin = trackerHost(hits[i].Host)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, h.cfg.PublishTimeout)
	defer cancel()
	pos, err := h.pub.Publish(ctx, evs)
	if err != nil {
		if errors.Is(err, ErrUnavailable) {
			return viewcount.StreamPosition{}, err
		}
		return viewcount.StreamPosition{}, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return pos, nil
}

// noSalt is the error of a request none of whose n events could be given
// a visitor id: answered 503 like a failed publish, and counted as one.
func (h *Handler) noSalt(n int, err error) error {
	h.metrics.PublishErrors.Add(uint64(n))
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// event validates and normalises one hit into e (all but the referrer and
// the hashes, which accept fills in). field(i) prefixes error messages; it
// is called only on an error, since building it for every event of a batch
// cost more than the rest of the validation.
func (h *Handler) event(e *viewcount.Event, hit *Hit, field func(int) string, i int, src viewcount.Source, ua string, now time.Time) error {
	kind, ok := hit.kind()
	if !ok {
		return badInput("%stype: %s", field(i), wantType)
	}
	if hit.Site == "" {
		return badInput("%ssite: required", field(i))
	}
	site, err := viewcount.NormaliseSite(hit.Site)
	if err != nil {
		return badInput("%ssite: not a domain name", field(i))
	}
	if hit.Page == "" {
		return badInput("%spage: required", field(i))
	}
	page, err := NormalisePage(hit.Page, h.cfg.KeepQuery, h.cfg.MaxPageLen)
	if err != nil {
		return badInput("%spage: %s", field(i), reason(err))
	}
	// A bad referrer is dropped (NormaliseReferrer), but text that is not
	// UTF-8 is a broken client, refused as for every other field.
	if !utf8.ValidString(hit.Referrer) {
		return badInput("%sreferrer: invalid UTF-8", field(i))
	}
	id := hit.ID
	switch {
	case id == "" && kind == viewcount.KindEngagement:
		// An engagement names its view by id: one made up names none.
		return badInput("%sid: required for an engagement", field(i))
	case id == "":
		id = newEventID()
	default:
		if err := checkID(id); err != nil {
			return badInput("%sid: %s", field(i), reason(err))
		}
	}
	if kind == viewcount.KindEngagement {
		eng, err := hit.engagement(field, i)
		if err != nil {
			return err
		}
		// The tracker's webdriver and hints describe the browser, which
		// its view already told: an engagement carries neither.
		*e = viewcount.Event{
			Time: now, Site: site, Page: page, UA: ua, ID: id, Source: src, UTM: ParseUTM(hit.Page),
			Kind: viewcount.KindEngagement, Engagement: eng,
		}
		return nil
	}
	// A view with an engagement's numbers is a client's bug: refused, so it
	// shows, rather than counted as a view.
	if name := hit.engagementField(); name != "" {
		return badInput("%s%s: only for an engagement", field(i), name)
	}
	*e = viewcount.Event{
		Time:      now,
		Site:      site,
		Page:      page,
		UA:        ua,
		ID:        id,
		Webdriver: hit.Webdriver,
		Source:    src,
		Hints:     hit.Hints,
		UTM:       ParseUTM(hit.Page), // before the query is gone
	}
	return nil
}

// reason is the part of a wrapped ErrBadInput meant for the client.
func reason(err error) string {
	s := err.Error()
	if p := ErrBadInput.Error() + ": "; len(s) > len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}

// checkID accepts a client event id: printable ASCII, at most MaxIDLen
// bytes. Longer ids are rejected rather than cut: two ids sharing a prefix
// would become one and the second view would count as a retry.
func checkID(id string) error {
	if len(id) > MaxIDLen {
		return fmt.Errorf("%w: longer than %d bytes", ErrBadInput, MaxIDLen)
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x20 || id[i] > 0x7e {
			return fmt.Errorf("%w: must be printable ASCII", ErrBadInput)
		}
	}
	return nil
}

// newEventID is a random 128-bit id, hex: unique without coordination.
func newEventID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	var s [32]byte
	hex.Encode(s[:], b[:])
	return string(s[:])
}

// BeaconEvent is one event of a POST /v1/events body: the wire contract
// vc.js and other clients (loadgen) write. Unknown fields are ignored, so
// trackers may send more than this version reads.
type BeaconEvent struct {
	Site      string       `json:"site"`
	Page      string       `json:"page"`
	Referrer  string       `json:"referrer"`
	ID        string       `json:"id"`
	Webdriver bool         `json:"webdriver"`
	Hints     *BeaconHints `json:"hints,omitempty"`
	// Host is the page's location.hostname (current vc.js; absent from
	// older trackers): what the page says of itself, used when the
	// request's Origin and Referer headers name no host.
	Host string `json:"host,omitempty"`
	// Type is "view" (or absent) for a view, "engagement" for an
	// engagement report, which carries the numbers below
	// (docs/engagement.md).
	Type      string `json:"type,omitempty"`
	EngagedMS *int64 `json:"engaged_ms,omitempty"`
	Scroll    *int64 `json:"scroll,omitempty"`
	AgeMS     *int64 `json:"age_ms,omitempty"`
}

// BeaconHints are what vc.js reports of the browser (see viewcount.Hints).
// Out-of-range numbers are clamped, not rejected: they are evidence for the
// validators, not the client's mistake to fix.
type BeaconHints struct {
	ScreenW   int64 `json:"sw"`
	ScreenH   int64 `json:"sh"`
	Languages int64 `json:"lang"`
	TZ        bool  `json:"tz"`
	UAData    bool  `json:"uad"`
	Secure    bool  `json:"sec"`
	// The window's outer size; absent (nil) from older trackers.
	OuterW *int64 `json:"ow"`
	OuterH *int64 `json:"oh"`
}

func (b *BeaconHints) hints() viewcount.Hints {
	if b == nil {
		return viewcount.Hints{}
	}
	h := viewcount.Hints{
		Present: true, ScreenW: uint16(clamp(b.ScreenW, 0xffff)), ScreenH: uint16(clamp(b.ScreenH, 0xffff)),
		Languages: uint8(clamp(b.Languages, 0xff)), TZ: b.TZ, UAData: b.UAData, Secure: b.Secure,
	}
	if b.OuterW != nil && b.OuterH != nil {
		h.Window, h.OuterW, h.OuterH = true, uint16(clamp(*b.OuterW, 0xffff)), uint16(clamp(*b.OuterH, 0xffff))
	}
	return h
}

func clamp(v, hi int64) int64 { return max(0, min(v, hi)) }

// decodeBeacon decodes a beacon body: one JSON object, or an array of 1 to
// MaxBeaconEvents objects. array says which, so errors can name
// "events[3].page" or just "page".
func decodeBeacon(body []byte) (hits []Hit, array bool, err error) {
	if hits, array, ok := fastBeacon(body); ok {
		return hits, array, nil
	}
	if array, err := checkBeaconText(body); err != nil {
		return nil, array, err
	}
	body = bytes.TrimLeft(body, " \t\r\n")
	if len(body) == 0 {
		return nil, false, badInput("empty body: want a JSON object or array")
	}
	switch body[0] {
	case '{':
		var e BeaconEvent
		if err := json.Unmarshal(body, &e); err != nil {
			return nil, false, jsonError("", err)
		}
		return []Hit{e.hit()}, false, nil
	case '[':
		var raws []json.RawMessage
		if err := json.Unmarshal(body, &raws); err != nil {
			return nil, true, jsonError("", err)
		}
		if len(raws) == 0 {
			return nil, true, badInput("events: empty array")
		}
		if len(raws) > MaxBeaconEvents {
			return nil, true, badInput("events: %d events, at most %d per request", len(raws), MaxBeaconEvents)
		}
		hits = make([]Hit, len(raws))
		for i, raw := range raws {
			field := eventField(i)
			if len(raw) == 0 || raw[0] != '{' {
				return nil, true, badInput("%s: must be an object", field[:len(field)-1])
			}
			var e BeaconEvent
			if err := json.Unmarshal(raw, &e); err != nil {
				return nil, true, jsonError(field, err)
			}
			hits[i] = e.hit()
		}
		return hits, true, nil
	}
	return nil, false, badInput("body must be a JSON object or array")
}

func (e *BeaconEvent) hit() Hit {
	h := Hit{Site: e.Site, Page: e.Page, Referrer: e.Referrer, ID: e.ID, Webdriver: e.Webdriver, Hints: e.Hints.hints(), Host: e.Host}
	if e.Type != "" || e.EngagedMS != nil || e.Scroll != nil || e.AgeMS != nil {
		h.Report = &WireReport{Type: e.Type, EngagedMS: wireInt(e.EngagedMS), Scroll: wireInt(e.Scroll), AgeMS: wireInt(e.AgeMS)}
	}
	return h
}

func wireInt(v *int64) WireInt {
	if v == nil {
		return WireInt{}
	}
	return WireInt{V: *v, Set: true}
}

// eventField is the error prefix of the i-th event of an array body.
func eventField(i int) string { return "events[" + strconv.Itoa(i) + "]." }

// jsonError words a decoding error for the client.
func jsonError(field string, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return badInput("body must be a JSON object or array")
		}
		if want := engagementWant(te.Field); want != "" {
			// Worded as Handler.event words a value of the right type
			// out of range: the client's fix is the same.
			return badInput("%s%s: %s", field, te.Field, want)
		}
		want := "a string"
		if te.Type != nil {
			switch te.Type.Kind() {
			case reflect.Bool:
				want = "a boolean"
			case reflect.Int64:
				want = "a whole number"
			case reflect.Pointer, reflect.Struct:
				want = "an object"
			}
		}
		return badInput("%s%s: must be %s", field, te.Field, want)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return badInput("malformed JSON: %v", se)
	}
	return badInput("malformed JSON: %v", err)
}

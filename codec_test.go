package viewcount

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func sampleEvents() []Event {
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 123e6, time.UTC)
	return []Event{
		{Time: t0, Site: "example.com", Page: "/", UA: "Mozilla/5.0", ID: "a1", Visitor: 1<<63 + 5, Network: 42, Source: SourcePixel},
		{Time: t0.Add(time.Second), Site: "example.com", Page: "/blog/ü", Referrer: "https://news.example/x", UA: "", ID: "", Webdriver: true, Source: SourceBeacon,
			Datacenter: true, Hints: Hints{Present: true, ScreenW: 1920, ScreenH: 1080, Languages: 3, TZ: true, UAData: true, Secure: true}},
	}
}

func TestCodecRoundTrip(t *testing.T) {
	in := sampleEvents()
	b := AppendEvents(nil, in)
	out, err := DecodeEvents(nil, b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", out, in)
	}
}

// enrichedEvents are sampleEvents with what version 3 added.
func enrichedEvents() []Event {
	evs := sampleEvents()
	evs[0].Country = "DE"
	evs[1].UTM = UTM{Source: "newsletter", Medium: "email", Campaign: "black friday ü"}
	evs[1].Country = "US"
	return append(evs, Event{Time: evs[0].Time, Site: "a.example", Page: "/x", UTM: UTM{Campaign: "only"}, Source: SourcePixel})
}

// signalEvents are enrichedEvents with what version 4 added.
func signalEvents() []Event {
	evs := enrichedEvents()
	evs[0].Headers = HeadersSeen | HeaderFetchMeta | HeaderFetchFits | HeaderAccept | HeaderAcceptLanguage | HeaderSecure
	evs[0].ASN = 3320
	evs[1].Headers = HeadersSeen
	evs[2].ASN = 4200000000 // a 32-bit private-use ASN takes the uvarint's widest form
	evs[1].Origin = "blog.example.com"
	return evs
}

func TestCodecRoundTripV4(t *testing.T) {
	in := signalEvents()
	b := AppendEvents(nil, in)
	if b[0] != 4 {
		t.Fatalf("version %d, want 4", b[0])
	}
	out, err := DecodeEvents(nil, b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", out, in)
	}
	// An event without the new fields costs the extension byte over
	// version 3; header flags in their common range two more, an ASN up to
	// five.
	plain := enrichedEvents()
	if got, want := len(AppendEvents(nil, plain)), len(appendOld(3, plain))+len(plain); got != want {
		t.Errorf("plain events: %d bytes, want %d (version 3 plus one per event)", got, want)
	}
	one := func(e Event) int { return len(AppendEvents(nil, []Event{e})) }
	base := one(plain[0])
	if got := one(in[0]) - base; got != 2+2 { // flags 0x11f and AS3320 take two bytes each
		t.Errorf("headers + ASN 3320 cost %d bytes, want 4", got)
	}
	// The window the beacon reports, 0 × 0 included, travels; a window
	// without hints is corrupt.
	for _, w := range [][2]uint16{{0, 0}, {1366, 768}, {65535, 1}} {
		e := plain[0]
		e.Hints = Hints{Present: true, ScreenW: 800, ScreenH: 600, Languages: 2, Window: true, OuterW: w[0], OuterH: w[1]}
		got, err := DecodeEvents(nil, AppendEvents(nil, []Event{e}))
		if err != nil || len(got) != 1 || got[0].Hints != e.Hints {
			t.Errorf("window %v: %+v, %v", w, got, err)
		}
	}
	e := plain[0]
	e.Hints = Hints{Window: true, OuterW: 5, OuterH: 5}
	if got, err := DecodeEvents(nil, AppendEvents(nil, []Event{e})); err != nil || got[0].Hints.Window {
		t.Errorf("a window without hints: %+v, %v (not encoded, so not decoded)", got, err)
	}
}

// engagementEvents are signalEvents with engagement reports among them:
// one with every field, one of zeros (a report sent at once, before any
// scroll) and one at the limits of the types.
func engagementEvents() []Event {
	evs := signalEvents()
	full := evs[1]
	full.Kind, full.Engagement = KindEngagement, Engagement{EngagedMS: 12_345, Scroll: 80, AgeMS: 60_000}
	full.Webdriver, full.Hints = false, Hints{} // ingest carries neither on an engagement
	zero := evs[0]
	zero.Kind = KindEngagement
	limits := evs[2]
	limits.Kind, limits.Engagement = KindEngagement, Engagement{EngagedMS: 1<<32 - 1, Scroll: 100, AgeMS: 1<<32 - 1}
	return append(evs, full, zero, limits)
}

func TestCodecEngagement(t *testing.T) {
	in := engagementEvents()
	out, err := DecodeEvents(nil, AppendEvents(nil, in))
	if err != nil || !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip: %v\n got %+v\nwant %+v", err, out, in)
	}
	// An engagement is its view's encoding with the extension bit set and
	// its three numbers after everything else; a view is unchanged.
	f := func(eng Engagement, tail ...byte) {
		t.Helper()
		view := signalEvents()[1]
		e := view
		e.Kind, e.Engagement = KindEngagement, eng
		vb, eb := appendEvent(nil, &view), appendEvent(nil, &e)
		at := len(binary.AppendVarint(nil, view.Time.UnixMilli())) + 1 // the extension flags, after time and flags
		want := append(append([]byte{}, vb...), tail...)
		want[at] |= extEngagement
		if !bytes.Equal(eb, want) {
			t.Errorf("%+v:\n got %x\nwant %x", eng, eb, want)
		}
	}
	f(Engagement{}, 0, 0, 0)
	f(Engagement{EngagedMS: 300, Scroll: 100, AgeMS: 5}, 0xac, 0x02, 100, 5)
	f(Engagement{EngagedMS: MaxEngagedMS, Scroll: 7, AgeMS: MaxEngagedMS}, 0x80, 0xb8, 0x99, 0x29, 7, 0x80, 0xb8, 0x99, 0x29)
	// A depth over 100 never reaches the stream: it would make the whole
	// message, other clients' events with it, undecodable.
	over := Event{Time: time.UnixMilli(0).UTC(), Kind: KindEngagement, Engagement: Engagement{Scroll: 101}}
	if got, err := DecodeEvents(nil, AppendEvents(nil, []Event{over})); err != nil || got[0].Engagement.Scroll != 100 {
		t.Errorf("scroll 101: %+v, %v; want 100", got, err)
	}
	// A view's Engagement is not the codec's to carry (there is none).
	view := Event{Time: time.UnixMilli(0).UTC(), Engagement: Engagement{EngagedMS: 5}}
	if b := AppendEvents(nil, []Event{view}); b[2+1+1] != 0 || len(b) != len(AppendEvents(nil, []Event{{Time: view.Time}})) {
		t.Errorf("a view with engagement numbers encodes as %x", b)
	}
}

func TestCodecDecodesV3(t *testing.T) {
	in := enrichedEvents()
	out, err := DecodeEvents(nil, appendOld(3, in))
	if err != nil || !reflect.DeepEqual(in, out) {
		t.Fatalf("v3: %v\n got %+v\nwant %+v", err, out, in)
	}
}

func TestCodecExtension(t *testing.T) {
	// An extension bit no decoder knows is corruption, not something to
	// skip: its field's length is unknown.
	b := AppendEvents(nil, []Event{{Time: time.UnixMilli(0).UTC()}})
	ext := 2 + 1 + 1 // version, count, time varint, flags
	if b[ext] != 0 {
		t.Fatalf("extension byte %d, want 0", b[ext])
	}
	b[ext] = 1 << 5
	if _, err := DecodeEvents(nil, b); !errors.Is(err, ErrCorrupt) {
		t.Errorf("unknown extension: err = %v, want ErrCorrupt", err)
	}
	// An engagement's numbers are within their types, its depth a
	// percentage, and all three are there.
	for _, tail := range [][]byte{
		append(binary.AppendUvarint(nil, 1<<32), 0, 0), {0, 101, 0}, binary.AppendUvarint([]byte{0, 0}, 1<<32),
		{0, 0}, {0}, {0x80},
	} {
		b := AppendEvents(nil, []Event{{Time: time.UnixMilli(0).UTC()}})
		b[ext] = extEngagement
		if _, err := DecodeEvents(nil, append(b, tail...)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("engagement %x: err = %v, want ErrCorrupt", tail, err)
		}
	}
	// Present fields must hold a value: zero is written by leaving the bit out.
	for _, f := range []byte{extHeaders, extASN, extOrigin} {
		b := AppendEvents(nil, []Event{{Time: time.UnixMilli(0).UTC()}})
		b[ext] = f
		b = append(b, 0)
		if _, err := DecodeEvents(nil, b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("zero field %d: err = %v, want ErrCorrupt", f, err)
		}
	}
	// Header flags are 16 bits, an ASN 32.
	for _, c := range []struct {
		f byte
		v uint64
	}{{extHeaders, 1 << 16}, {extASN, 1 << 32}} {
		b := AppendEvents(nil, []Event{{Time: time.UnixMilli(0).UTC()}})
		b[ext] = c.f
		b = binary.AppendUvarint(b, c.v)
		if _, err := DecodeEvents(nil, b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("field %d = %d: err = %v, want ErrCorrupt", c.f, c.v, err)
		}
	}
}

// appendOld is the version 2 or 3 encoder as it was, byte for byte: the
// decoder must read what it wrote for as long as the stream retains such
// messages.
func appendOld(version byte, evs []Event) []byte {
	dst := []byte{version, byte(len(evs))}
	for i := range evs {
		e := &evs[i]
		dst = binary.AppendVarint(dst, e.Time.UnixMilli())
		utm := version >= 3 && e.UTM != (UTM{})
		country := version >= 3 && validCountry(e.Country)
		flags := bit(e.Webdriver, 1) | bit(e.Datacenter, 2) | bit(e.Hints.Present, 4) |
			bit(e.Hints.TZ, 8) | bit(e.Hints.UAData, 16) | bit(e.Hints.Secure, 32) | bit(utm, 64) | bit(country, 128)
		dst = append(dst, flags, byte(e.Source))
		dst = binary.LittleEndian.AppendUint64(dst, e.Visitor)
		dst = binary.LittleEndian.AppendUint64(dst, e.Network)
		for _, s := range [...]string{e.Site, e.Page, e.Referrer, e.UA, e.ID} {
			dst = binary.AppendUvarint(dst, uint64(len(s)))
			dst = append(dst, s...)
		}
		if e.Hints.Present {
			dst = binary.AppendUvarint(dst, uint64(e.Hints.ScreenW))
			dst = binary.AppendUvarint(dst, uint64(e.Hints.ScreenH))
			dst = append(dst, e.Hints.Languages)
		}
		if utm {
			for _, s := range [...]string{e.UTM.Source, e.UTM.Medium, e.UTM.Campaign} {
				dst = binary.AppendUvarint(dst, uint64(len(s)))
				dst = append(dst, s...)
			}
		}
		if country {
			dst = append(dst, e.Country...)
		}
	}
	return dst
}

func TestCodecDecodesV2(t *testing.T) {
	in := sampleEvents()
	out, err := DecodeEvents(nil, appendOld(2, in))
	if err != nil || !reflect.DeepEqual(in, out) {
		t.Fatalf("v2: %v\n got %+v\nwant %+v", err, out, in)
	}
	// A version 2 message never set the new flags: bits there are not read
	// as UTM or country (which would misalign the rest).
	b := appendOld(2, sampleEvents()[:1])
	b[2+binary.PutVarint(make([]byte, 10), in[0].Time.UnixMilli())] |= flagUTM | flagCountry
	out, err = DecodeEvents(nil, b)
	if err != nil || out[0].UTM != (UTM{}) || out[0].Country != "" {
		t.Fatalf("v2 with stray flags: %v %+v", err, out)
	}
}

func TestCodecCountry(t *testing.T) {
	// Only two upper-case letters travel; anything else is unknown.
	for in, want := range map[string]string{"US": "US", "DE": "DE", "us": "", "U": "", "USA": "", "1A": "", "": ""} {
		out, err := DecodeEvents(nil, AppendEvents(nil, []Event{{Time: time.UnixMilli(0).UTC(), Country: in}}))
		if err != nil || out[0].Country != want {
			t.Errorf("country %q: %v, got %q, want %q", in, err, out[0].Country, want)
		}
	}
	// A corrupt code is corruption, not a country.
	b := AppendEvents(nil, []Event{{Time: time.UnixMilli(0).UTC(), Country: "US"}})
	b[len(b)-1] = 'z'
	if _, err := DecodeEvents(nil, b); !errors.Is(err, ErrCorrupt) {
		t.Errorf("bad country: err = %v, want ErrCorrupt", err)
	}
}

func TestCodecDecodesV1(t *testing.T) {
	// A version 1 message: one pixel event with webdriver set.
	in := sampleEvents()[:1]
	in[0].Webdriver = true
	b := appendOld(2, in)
	b[0] = codecVersionV1
	out, err := DecodeEvents(nil, b)
	if err != nil || !reflect.DeepEqual(in, out) {
		t.Fatalf("v1: %v\n got %+v\nwant %+v", err, out, in)
	}
}

func TestCodecRejectsCorrupt(t *testing.T) {
	good := AppendEvents(nil, sampleEvents())
	f := func(name string, b []byte) {
		t.Helper()
		if _, err := DecodeEvents(nil, b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", name, err)
		}
	}
	f("empty", nil)
	f("version", append([]byte{9}, good[1:]...))
	f("truncated", good[:len(good)-3])
	enriched := AppendEvents(nil, enrichedEvents())
	f("truncated utm", enriched[:len(enriched)-2])
	signals := AppendEvents(nil, signalEvents())
	f("truncated asn", signals[:len(signals)-1])
	f("version 5", append([]byte{5}, signals[1:]...))
	f("trailing", append(append([]byte{}, good...), 0))
	f("huge count", []byte{codecVersion, 0xff, 0xff, 0xff, 0xff, 0x0f})
}

func FuzzDecodeEvents(f *testing.F) {
	f.Add(AppendEvents(nil, sampleEvents()))
	f.Add([]byte{codecVersion, 0})
	f.Add(AppendEvents(nil, enrichedEvents()))
	f.Add(appendOld(2, sampleEvents()))
	f.Add(appendOld(3, enrichedEvents()))
	f.Add(AppendEvents(nil, signalEvents()))
	f.Add(AppendEvents(nil, engagementEvents()))
	f.Fuzz(func(t *testing.T, b []byte) {
		evs, err := DecodeEvents(nil, b)
		if err != nil {
			return
		}
		// Whatever decodes must re-encode to something that decodes the same.
		again, err := DecodeEvents(nil, AppendEvents(nil, evs))
		if err != nil || len(again) != len(evs) {
			t.Fatalf("re-decode: %v (%d vs %d)", err, len(again), len(evs))
		}
		if !reflect.DeepEqual(again, evs) {
			t.Fatalf("re-decode:\n%+v\nwant\n%+v", again, evs)
		}
		for i := range evs {
			if n := len(appendEvent(nil, &evs[i])); n > EncodedSize(&evs[i]) {
				t.Fatalf("event %d encodes to %d bytes, EncodedSize says at most %d", i, n, EncodedSize(&evs[i]))
			}
		}
	})
}

func BenchmarkDecodeEvents(b *testing.B) {
	b.Run("plain", benchDecode)
	b.Run("enriched", benchDecode)
}

func benchDecode(b *testing.B) {
	evs := benchEvents(b)
	msg := AppendEvents(nil, evs)
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	var dst []Event
	for b.Loop() {
		dst, _ = DecodeEvents(dst[:0], msg)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
}

// The codec benchmarks run on version 2's sample events (comparable across
// versions) and on events with UTM tags and a country ("enriched").
func benchEvents(b *testing.B) []Event {
	sample := sampleEvents()
	if strings.HasSuffix(b.Name(), "enriched") {
		sample = enrichedEvents()[:2]
	}
	evs := make([]Event, 100)
	for i := range evs {
		evs[i] = sample[i%2]
	}
	return evs
}

func BenchmarkAppendEvents(b *testing.B) {
	b.Run("plain", benchAppend)
	b.Run("enriched", benchAppend)
}

func benchAppend(b *testing.B) {
	evs := benchEvents(b)
	dst := AppendEvents(nil, evs)
	b.SetBytes(int64(len(dst)))
	b.ReportAllocs()
	for b.Loop() {
		dst = AppendEvents(dst[:0], evs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
}

func TestHeaderFlagsString(t *testing.T) {
	for f, want := range map[HeaderFlags]string{
		0: "", HeadersSeen | HeaderSecure: "seen|secure",
		HeadersSeen | HeaderFetchMeta | HeaderFetchFits | HeaderAccept | HeaderAcceptLanguage | HeaderClientHints | HeaderHintsAgree | HeaderHeadlessBrand: "seen|fetch|fetch-fits|accept|accept-language|client-hints|hints-agree|headless-brand",
		HeadersSeen | 1<<12: "seen|0x1000",
	} {
		if got := f.String(); got != want {
			t.Errorf("%#x: %q, want %q", uint16(f), got, want)
		}
	}
}

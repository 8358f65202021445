package viewcount

import (
	"errors"
	"reflect"
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

func TestCodecDecodesV1(t *testing.T) {
	// A version 1 message: one pixel event with webdriver set.
	in := sampleEvents()[:1]
	in[0].Webdriver = true
	b := AppendEvents(nil, in)
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
	f("trailing", append(append([]byte{}, good...), 0))
	f("huge count", []byte{codecVersion, 0xff, 0xff, 0xff, 0xff, 0x0f})
}

func FuzzDecodeEvents(f *testing.F) {
	f.Add(AppendEvents(nil, sampleEvents()))
	f.Add([]byte{codecVersion, 0})
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
	evs := make([]Event, 100)
	for i := range evs {
		evs[i] = sampleEvents()[i%2]
	}
	msg := AppendEvents(nil, evs)
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	var dst []Event
	for b.Loop() {
		dst, _ = DecodeEvents(dst[:0], msg)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
}

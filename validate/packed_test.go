package validate

import (
	"math/rand/v2"
	"reflect"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/membudget"
	"github.com/viewcount/viewcount/internal/noscan"
)

var timeType = reflect.TypeFor[time.Time]()

// fill sets every field reachable in v, recursively, to a value from r;
// with nonzero, none is left at its zero value. It fails on a kind it does
// not know (a slice, map or pointer added to Verdict), which packing would
// have to learn first.
func fill(t *testing.T, r *rand.Rand, v reflect.Value, path string, nonzero bool, zones []*time.Location) {
	if v.Type() == timeType {
		var tm time.Time
		switch {
		case !nonzero && r.IntN(8) == 0:
			// The zero time: a verdict without a visit has two.
		default:
			tm = time.Unix(r.Int64N(1<<40)-1<<39, r.Int64N(1e9)).In(zones[r.IntN(len(zones))])
		}
		v.Set(reflect.ValueOf(tm))
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			fill(t, r, v.Field(i), path+"."+v.Type().Field(i).Name, nonzero, zones)
		}
	case reflect.String:
		n := r.IntN(40)
		if nonzero {
			n++
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32()) // any bytes: invalid UTF-8 and NULs too
		}
		v.SetString(string(b))
	case reflect.Bool:
		v.SetBool(nonzero || r.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.SetInt(int64(r.Uint64())); nonzero && v.Int() == 0 {
			v.SetInt(1)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if v.SetUint(r.Uint64()); nonzero && v.Uint() == 0 {
			v.SetUint(1)
		}
	default:
		t.Fatalf("Verdict field %s is a %s: teach packedVerdict (validate/packed.go) to keep it, then this test", path, v.Kind())
	}
}

// TestPackedVerdictRoundTrip: a held verdict comes out of the queue as it
// went in, every field (strings of any bytes, times in any zone, the zero
// time), through the queue's compaction: random pushes and releases checked
// against a plain FIFO of Verdicts.
func TestPackedVerdictRoundTrip(t *testing.T) {
	zones := []*time.Location{time.UTC, time.Local, time.FixedZone("x", 5*3600+1800), time.FixedZone("y", -7*3600)}
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 20 {
		q := holdQueue{window: 1000, max: 1 + r.IntN(300)}
		var want, got []viewcount.Verdict
		mark := int64(0)
		for op := range 2000 {
			if r.IntN(3) > 0 {
				var v viewcount.Verdict
				fill(t, r, reflect.ValueOf(&v).Elem(), "Verdict", round == 0 && op == 0, zones)
				v.Time = time.UnixMilli(mark + r.Int64N(2000)).In(zones[r.IntN(len(zones))])
				v.Kind = viewcount.Kind(r.IntN(2))
				q.push(v)
				want = append(want, v)
				continue
			}
			mark += r.Int64N(1500)
			q.observe(mark)
			got = q.release(got, func(*viewcount.Verdict) {})
		}
		q.observe(mark + 1e6)
		q.max = 0
		got = q.release(got, func(*viewcount.Verdict) {})
		if q.held() != 0 || len(q.views) != 0 || len(q.arena) != 0 {
			t.Fatalf("round %d: drained queue holds %d verdicts, %d view keys, %d arena bytes", round, q.held(), len(q.views), len(q.arena))
		}
		// Release takes from the front only, so order is kept.
		if len(got) != len(want) {
			t.Fatalf("round %d: %d verdicts out, %d in", round, len(got), len(want))
		}
		for i := range want {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("round %d, verdict %d:\n got %+v\nwant %+v", round, i, got[i], want[i])
			}
		}
	}
}

// TestPackedVerdictHasNoPointers: the point of packing. A type without
// pointers is allocated in memory the garbage collector does not scan.
func TestPackedVerdictHasNoPointers(t *testing.T) {
	if p := noscan.Pointers(reflect.TypeFor[packedVerdict](), "packedVerdict"); len(p) > 0 {
		t.Errorf("the garbage collector would scan every held verdict for %v", p)
	}
}

// TestHeldBytes: membudget.HeldBytes, what the budget and the metrics count
// per held view, is not below what a held pixel view really costs on the
// heap (its packed scalars, its strings in the arena, its key in the view
// count), nor far above it.
func TestHeldBytes(t *testing.T) {
	const n = 100_000
	ua := "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36"
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	q := holdQueue{window: 1000, max: n}
	for i := range n {
		v := viewcount.Verdict{Event: viewcount.Event{Time: time.UnixMilli(int64(i)).UTC(), Site: "example.com",
			Page: "/blog/2026/a-post-about-" + strconv.Itoa(i%500), Referrer: "https://news.ycombinator.com/item",
			UA: ua, ID: strconv.FormatUint(rand.Uint64(), 36) + strconv.FormatUint(rand.Uint64(), 36), Country: "DE",
			Origin: "example.com", Visitor: uint64(i), Network: uint64(i / 16)},
			Rules: "r-1f3a9c", Dims: viewcount.Dims{RefHost: "news.ycombinator.com", RefSource: "Hacker News",
				Browser: "Chrome", OS: "Windows", Device: "desktop"}}
		q.push(v)
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	per := float64(ms.HeapAlloc-before) / n
	t.Logf("%.0f bytes a held view (HeldBytes %d)", per, membudget.HeldBytes)
	if per > membudget.HeldBytes || per < membudget.HeldBytes/2 {
		t.Fatalf("a held view costs %.0f bytes; membudget.HeldBytes is %d", per, membudget.HeldBytes)
	}
	runtime.KeepAlive(&q)
}

// BenchmarkHoldQueue is what holding costs a watched pixel view: its push
// and its release through the settle window, 100k held.
//
//	go test -run '^$' -bench BenchmarkHoldQueue ./validate/
func BenchmarkHoldQueue(b *testing.B) {
	ua := "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36"
	vs := make([]viewcount.Verdict, 1024)
	for i := range vs {
		vs[i] = viewcount.Verdict{Event: viewcount.Event{Site: "example.com", Page: "/blog/post-" + strconv.Itoa(i),
			Referrer: "https://news.ycombinator.com/item", UA: ua, ID: strconv.FormatUint(uint64(i)*0x9E3779B97F4A7C15, 36),
			Country: "DE", Origin: "example.com", Visitor: uint64(i), Network: uint64(i / 16)},
			Rules: "r-1f3a9c", Dims: viewcount.Dims{RefHost: "news.ycombinator.com", RefSource: "Hacker News",
				Browser: "Chrome", OS: "Windows", Device: "desktop"}}
	}
	q := holdQueue{window: 100_000, max: 1 << 30}
	var out []viewcount.Verdict
	i := 0
	for b.Loop() {
		v := vs[i%len(vs)]
		v.Time = time.UnixMilli(int64(i)).UTC()
		q.push(v)
		q.observe(int64(i))
		out = q.release(out[:0], func(*viewcount.Verdict) {})
		i++
	}
}

// BenchmarkHeldGC is what 100k held pixel views (a settle window at 20k
// views/s) add to a full collection: the time of runtime.GC with them held,
// each with its strings allocated apart as a decoded stream gives them.
//
//	go test -run '^$' -bench BenchmarkHeldGC ./validate/
func BenchmarkHeldGC(b *testing.B) {
	ua := "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36"
	q := holdQueue{window: 1 << 40, max: 1 << 30}
	for i := range 100_000 {
		q.push(viewcount.Verdict{Event: viewcount.Event{Time: time.UnixMilli(int64(i)).UTC(), Site: strconv.Itoa(i%7) + "example.com",
			Page: "/blog/post-" + strconv.Itoa(i), Referrer: "https://news.ycombinator.com/item?" + strconv.Itoa(i),
			UA: ua + strconv.Itoa(i%300), ID: strconv.FormatUint(uint64(i)*0x9E3779B97F4A7C15, 36),
			Country: "DE", Origin: "example.com", Visitor: uint64(i), Network: uint64(i / 16)},
			Rules: "r-1f3a9c", Dims: viewcount.Dims{RefHost: "news.ycombinator.com", RefSource: "Hacker News",
				Browser: "Chrome", OS: "Windows", Device: "desktop"}})
	}
	runtime.GC()
	for b.Loop() {
		runtime.GC()
	}
	runtime.KeepAlive(&q)
}

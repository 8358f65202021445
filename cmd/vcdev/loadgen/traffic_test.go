package loadgen

import (
	"math"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/x-way/crawlerdetect"
)

func newTestGenerator(t testing.TB, mix Mix, seed uint64) *Generator {
	t.Helper()
	g, err := NewGenerator(mix, rand.New(rand.NewPCG(seed, 1)))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// rounds returns the hits of the first n rounds exactly.
func rounds(t testing.TB, mix Mix, seed uint64, n int) []Hit {
	t.Helper()
	g := newTestGenerator(t, mix, seed)
	var hs []Hit
	for range n {
		g.fill()
		hs = append(hs, g.buf...)
		g.pos = len(g.buf)
	}
	return hs
}

func TestGeneratorDeterministic(t *testing.T) {
	a := newTestGenerator(t, DefaultMix(), 42).All(10000)
	b := newTestGenerator(t, DefaultMix(), 42).All(10000)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different hits")
	}
	c := newTestGenerator(t, DefaultMix(), 43).All(100)
	if reflect.DeepEqual(a[:100], c) {
		t.Fatal("different seeds, same hits")
	}
}

func TestGeneratorOrderedByEventTime(t *testing.T) {
	hs := newTestGenerator(t, DefaultMix(), 1).All(20000) // several rounds
	if !slices.IsSortedFunc(hs, func(a, b Hit) int { return int(a.At - b.At) }) {
		t.Fatal("hits not in event-time order")
	}
	if last := hs[len(hs)-1].At; last < DefaultMix().Duration {
		t.Fatalf("20000 hits span only %v: expected several rounds", last)
	}
}

func TestClassProportions(t *testing.T) {
	mix := DefaultMix()
	const n = 3
	hs := rounds(t, mix, 7, n)
	count := make(map[Class]int)
	var retries, humanBeacons, humanFirst int
	visitors := make(map[string]bool)
	for _, h := range hs {
		if h.Retry {
			retries++
			continue
		}
		count[h.Class]++
		if h.Class == Human {
			humanFirst++
			visitors[h.IP+h.UA] = true
			if h.Beacon {
				humanBeacons++
			}
		}
	}
	exact := map[Class]int{
		Bot: mix.Bots, Headless: mix.Headless, BadHints: mix.BadHints, Datacenter: mix.Datacenter,
		Spam: mix.Spam, UnknownSite: mix.UnknownSite, Flood: mix.FloodHits, Farm: mix.FarmHits,
	}
	for c, want := range exact {
		if count[c] != n*want {
			t.Errorf("%s: %d hits in %d rounds, want %d", c, count[c], n, n*want)
		}
	}
	if len(visitors) != n*mix.Visitors {
		t.Errorf("human visitors: %d, want %d", len(visitors), n*mix.Visitors)
	}
	near := func(name string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol {
			t.Errorf("%s: %.3f, want %.3f ± %.3f", name, got, want, tol)
		}
	}
	v := float64(n * mix.Visitors)
	near("views per visitor", float64(humanFirst)/v, 2.59, 0.15) // mean of the 1–6 weights
	near("reloads per visitor", float64(count[Reload])/v, mix.ReloadShare, 0.015)
	near("retries per visitor", float64(retries)/v, mix.RetryShare, 0.01)
	near("human beacon share", float64(humanBeacons)/float64(humanFirst), mix.BeaconShare, 0.03)
	total := float64(len(hs))
	near("human share of hits", float64(humanFirst)/total, 0.6, 0.05)
}

func TestHumansStayUnderTenViewsAMinute(t *testing.T) {
	hs := rounds(t, DefaultMix(), 3, 3)
	byVisitor := make(map[string][]time.Duration)
	for _, h := range hs {
		if h.Class == Human || h.Class == Reload {
			k := h.IP + "|" + h.UA
			byVisitor[k] = append(byVisitor[k], h.At)
		}
	}
	for k, ts := range byVisitor {
		slices.Sort(ts)
		for i := range ts {
			j := i
			for j < len(ts) && ts[j]-ts[i] < time.Minute {
				j++
			}
			if j-i > 10 {
				t.Fatalf("visitor %s: %d hits within a minute", k, j-i)
			}
		}
		if len(ts) > 8 {
			t.Fatalf("visitor %s: %d hits, want at most 6 views + reload + retry", k, len(ts))
		}
	}
}

func TestIDsUniqueExceptRetries(t *testing.T) {
	hs := newTestGenerator(t, DefaultMix(), 5).All(15000)
	first := make(map[string]Hit)
	for _, h := range hs {
		if len(h.ID) > 128 || h.ID == "" {
			t.Fatalf("id %q: want 1..128 bytes", h.ID)
		}
		for i := 0; i < len(h.ID); i++ {
			if h.ID[i] < 0x20 || h.ID[i] > 0x7e {
				t.Fatalf("id %q: not printable ASCII", h.ID)
			}
		}
		if c, ok := ClassOf(h.ID); !ok || c != h.Class {
			t.Fatalf("ClassOf(%q) = %q, %v; want %q", h.ID, c, ok, h.Class)
		}
		orig, seen := first[h.ID]
		switch {
		case h.Retry && !seen:
			t.Fatalf("retry %s before its original", h.ID)
		case h.Retry:
			o := h
			o.Retry, o.At = false, orig.At
			if !reflect.DeepEqual(o, orig) {
				t.Fatalf("retry %s differs from its original:\n%+v\n%+v", h.ID, h, orig)
			}
			if d := h.At - orig.At; d <= 0 || d > 5*time.Second {
				t.Fatalf("retry %s %v after its original", h.ID, d)
			}
		case seen:
			t.Fatalf("id %s issued twice", h.ID)
		default:
			first[h.ID] = h
		}
	}
}

func TestRunIDInIDs(t *testing.T) {
	mix := DefaultMix()
	mix.RunID = "r1"
	h := newTestGenerator(t, mix, 1).Next()
	if !strings.Contains(h.ID, "-r1-") {
		t.Fatalf("id %q lacks the run id", h.ID)
	}
	if c, ok := ClassOf(h.ID); !ok || c != h.Class {
		t.Fatalf("ClassOf(%q) = %q", h.ID, c)
	}
	if _, ok := ClassOf("deadbeef"); ok {
		t.Fatal("ClassOf of a foreign id succeeded")
	}
}

func TestAddresses(t *testing.T) {
	mix := DefaultMix()
	hs := rounds(t, mix, 11, 2)
	nets := make(map[netip.Prefix]string) // /24 → visitor
	inDC := func(a netip.Addr) bool {
		for _, p := range mix.DatacenterCIDRs {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	for _, h := range hs {
		a, err := netip.ParseAddr(h.IP)
		if err != nil {
			t.Fatalf("%s: IP %q: %v", h.ID, h.IP, err)
		}
		if h.Class == Datacenter {
			if !inDC(a) {
				t.Fatalf("%s: %s outside the datacenter ranges", h.ID, a)
			}
			continue
		}
		if !a.Is4() || a.IsPrivate() || a.IsLoopback() || a.IsMulticast() || a.IsUnspecified() || inDC(a) {
			t.Fatalf("%s (%s): %s is not a public non-datacenter IPv4", h.ID, h.Class, a)
		}
		for _, p := range reserved {
			if p.Contains(a) {
				t.Fatalf("%s: %s is reserved", h.ID, a)
			}
		}
		if h.Class == Farm {
			continue // one /24 by design
		}
		n := netip.PrefixFrom(a, 24).Masked()
		who := h.IP + "|" + h.UA
		if prev, ok := nets[n]; ok && prev != who {
			t.Fatalf("%s: /24 %s shared by two visitors", h.ID, n)
		}
		nets[n] = who
	}
}

func TestHumanSessions(t *testing.T) {
	hs := rounds(t, DefaultMix(), 13, 1)
	type view struct {
		page string
		at   time.Duration
	}
	views := make(map[string][]view)
	for _, h := range hs {
		if h.Retry {
			continue
		}
		k := h.IP + "|" + h.UA
		switch h.Class {
		case Human:
			for _, v := range views[k] {
				if v.page == h.Page {
					t.Fatalf("visitor %s views %s twice as human", k, h.Page)
				}
			}
			views[k] = append(views[k], view{h.Page, h.At})
		case Reload:
			var ok bool
			for _, v := range views[k] {
				if v.page == h.Page && h.At-v.at < 30*time.Minute {
					ok = true
				}
			}
			if !ok {
				t.Fatalf("reload %s: no earlier view of %s within 30 min", h.ID, h.Page)
			}
		}
	}
}

func TestHintsConsistent(t *testing.T) {
	for _, h := range rounds(t, DefaultMix(), 17, 1) {
		if !h.Beacon && h.Hints != nil {
			t.Fatalf("%s: pixel hit with hints", h.ID)
		}
		switch h.Class {
		case BadHints:
			if !h.Beacon || !strings.Contains(h.UA, "Chrome/") {
				t.Fatalf("%s: want a Chrome beacon", h.ID)
			}
			if x := h.Hints; x != nil && !(x.Secure && !x.UAData) && x.ScreenW != 0 && x.Languages != 0 {
				t.Fatalf("%s: hints %+v are plausible", h.ID, *x)
			}
		case Headless:
			if !h.Webdriver || !strings.Contains(h.UA, "Chrome/") {
				t.Fatalf("%s: want Chrome with webdriver", h.ID)
			}
		case Human, Reload, Farm, Flood, Datacenter, Spam, UnknownSite:
			if !h.Beacon {
				continue
			}
			x := h.Hints
			if x == nil || x.ScreenW == 0 || x.ScreenH == 0 || x.Languages == 0 || !x.TZ {
				t.Fatalf("%s: implausible hints %+v", h.ID, x)
			}
			chromium := strings.Contains(h.UA, "Chrome/") && !strings.Contains(h.UA, "CriOS")
			if x.UAData != (chromium && x.Secure) {
				t.Fatalf("%s: uad=%v secure=%v for %q", h.ID, x.UAData, x.Secure, h.UA)
			}
		}
		if h.Class == Spam && !slices.Contains(DefaultMix().SpamReferrers, h.Referrer) {
			t.Fatalf("%s: referrer %q not on the spam list", h.ID, h.Referrer)
		}
		if (h.Class == UnknownSite) != slices.Contains(DefaultMix().UnknownSites, h.Site) {
			t.Fatalf("%s (%s): site %s", h.ID, h.Class, h.Site)
		}
	}
}

func TestFloodAndFarm(t *testing.T) {
	mix := DefaultMix()
	var flood, farm []Hit
	for _, h := range rounds(t, mix, 19, 1) {
		switch h.Class {
		case Flood:
			flood = append(flood, h)
		case Farm:
			farm = append(farm, h)
		}
	}
	pages := make(map[string]bool)
	for _, h := range flood {
		if h.IP != flood[0].IP || h.UA != flood[0].UA {
			t.Fatal("flood from more than one visitor")
		}
		pages[h.Page] = true
	}
	if len(pages) != mix.FloodHits {
		t.Fatalf("flood: %d distinct pages of %d hits", len(pages), mix.FloodHits)
	}
	if span := flood[len(flood)-1].At - flood[0].At; span >= time.Minute {
		t.Fatalf("flood spans %v", span)
	}
	uas, clients, fpages := make(map[string]bool), make(map[string]bool), make(map[string]bool)
	net := netip.PrefixFrom(netip.MustParseAddr(farm[0].IP), 24).Masked()
	for _, h := range farm {
		if !net.Contains(netip.MustParseAddr(h.IP)) {
			t.Fatalf("farm hit from %s outside %s", h.IP, net)
		}
		if crawlerdetect.IsCrawler(h.UA) {
			t.Fatalf("farm UA %q looks like a crawler", h.UA)
		}
		uas[h.UA], clients[h.IP+h.UA], fpages[h.Page] = true, true, true
	}
	if len(uas) != mix.FarmHits || len(clients) != mix.FarmHits || len(fpages) != mix.FarmHits {
		t.Fatalf("farm: %d hits, %d UAs, %d clients, %d pages", len(farm), len(uas), len(clients), len(fpages))
	}
}

func TestFarmUAsDistinct(t *testing.T) {
	seen := make(map[string]bool)
	for i := range maxFarmHits {
		ua, _ := farmUA(i)
		if seen[ua] {
			t.Fatalf("farmUA(%d) = %q repeats", i, ua)
		}
		seen[ua] = true
	}
}

func TestUserAgents(t *testing.T) {
	for _, b := range browsers {
		for _, ua := range b.uas {
			if crawlerdetect.IsCrawler(ua) {
				t.Errorf("browser UA %q is a crawler to crawlerdetect", ua)
			}
		}
	}
	var missed []string
	for _, ua := range bots {
		if !crawlerdetect.IsCrawler(ua) {
			missed = append(missed, ua)
		}
	}
	// Not a failure: validate adds its own patterns for what the list lacks.
	t.Logf("%d of %d bot UAs not in crawlerdetect: %q", len(missed), len(bots), missed)
}

func TestHotPage(t *testing.T) {
	mix := DefaultMix()
	mix.HotPage = true
	for _, h := range newTestGenerator(t, mix, 23).All(3000) {
		if h.Page != "/" {
			t.Fatalf("%s on %s, want the hot page", h.ID, h.Page)
		}
	}
}

func TestHumanMix(t *testing.T) {
	for _, h := range newTestGenerator(t, HumanMix(), 29).All(3000) {
		if h.Class != Human || h.Retry {
			t.Fatalf("human mix sent %s (retry %v)", h.Class, h.Retry)
		}
	}
}

func TestMixValidate(t *testing.T) {
	f := func(edit func(*Mix), want string) {
		t.Helper()
		m := DefaultMix()
		edit(&m)
		err := m.Validate()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("Validate = %v, want %q", err, want)
		}
	}
	f(func(m *Mix) { m.Sites = nil }, "no sites")
	f(func(m *Mix) { m.Pages = 0 }, "Pages")
	f(func(m *Mix) { m.ZipfS = 1 }, "ZipfS")
	f(func(m *Mix) { m.Duration = time.Minute }, "Duration")
	f(func(m *Mix) { m.Bots = -1 }, "negative")
	f(func(m *Mix) { m.FarmHits = maxFarmHits + 1 }, "FarmHits")
	f(func(m *Mix) { m.BeaconShare = 2 }, "shares")
	f(func(m *Mix) { m.DatacenterCIDRs = nil }, "DatacenterCIDRs")
	if err := DefaultMix().Validate(); err != nil {
		t.Fatal(err)
	}
}

package loadgen

import (
	"cmp"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/viewcount/viewcount/ingest"
)

// Class is the kind of client that sent a hit: the label precision and
// recall are measured against. Only Human is valid traffic.
type Class string

const (
	Human       Class = "human"        // a person in a real browser: valid on first send
	Reload      Class = "reload"       // a human re-viewing a page within 30 min: duplicate
	Bot         Class = "bot"          // a crawler, monitor or HTTP library by its UA: bot_ua
	Headless    Class = "headless"     // Chrome UA reporting navigator.webdriver: headless
	BadHints    Class = "bad_hints"    // Chrome UA whose beacon hints are missing or impossible
	Flood       Class = "flood"        // one visitor viewing hundreds of pages a minute: rate
	Farm        Class = "farm"         // one /24 rotating through many UAs and IPs: network_rotation
	Datacenter  Class = "datacenter"   // browser UAs from datacenter ranges
	Spam        Class = "spam"         // a referrer on the spam list: bad_referrer
	UnknownSite Class = "unknown_site" // hits for a site that is not registered
)

// Classes lists every class, Human first; reports iterate it.
var Classes = []Class{Human, Reload, Bot, Headless, BadHints, Flood, Farm, Datacenter, Spam, UnknownSite}

// Valid reports whether hits of the class should be counted (on their first
// send: a retry never is).
func (c Class) Valid() bool { return c == Human }

// ClassOf returns the class encoded in an event id made by a Generator
// ("<class>-…"), so stored verdicts can be joined back to their label.
func ClassOf(id string) (Class, bool) {
	i := strings.IndexByte(id, '-')
	if i < 0 {
		return "", false
	}
	c := Class(id[:i])
	if !slices.Contains(Classes, c) {
		return "", false
	}
	return c, true
}

// Hints are the browser facts the beacon script reports (viewcount.Hints on
// the wire), in the JSON form vc.js sends.
type Hints = ingest.BeaconHints

// Hit is one labelled HTTP hit.
type Hit struct {
	Class Class
	// Retry marks an exact re-send of an earlier hit (same id), as a client
	// retrying after a lost answer sends it: it must be removed as a
	// duplicate_id, whatever its class.
	Retry  bool
	Beacon bool          // POST /v1/events; else GET /p.gif
	At     time.Duration // event time since the start of the stream
	Site   string
	Page   string
	// Referrer is the full referring URL ("" = direct).
	Referrer  string
	ID        string // "<class>-[<run>-]<n>"; a retry reuses its original's
	UA        string
	IP        string // sent as X-Forwarded-For
	Webdriver bool
	Hints     *Hints // beacon hints; nil = not sent
}

// Generator makes the labelled hit stream of a Mix, in event-time order,
// round after round. It is deterministic for a given rng and not safe for
// concurrent use.
type Generator struct {
	mix  Mix
	rng  *rand.Rand
	zipf *rand.Zipf

	round int
	buf   []Hit // the current round, sorted by At
	pos   int
	spare []Hit    // the buffer the next round is sorted into
	keys  []hitKey // sort keys of the round

	seq      map[Class]int // ids issued per class
	pages    []string      // paths of the most popular pages, made once each
	net      uint32        // next index into the /24 permutation
	mul, add uint32        // the permutation: n → (n·mul + add) mod 2^24
}

// NewGenerator returns a generator of mix's traffic drawing from rng.
func NewGenerator(mix Mix, rng *rand.Rand) (*Generator, error) {
	if err := mix.Validate(); err != nil {
		return nil, err
	}
	return &Generator{
		mix:  mix,
		rng:  rng,
		zipf: rand.NewZipf(rng, mix.ZipfS, 1, uint64(mix.Pages-1)),
		seq:  make(map[Class]int),
		mul:  rng.Uint32()&0xffffff | 1, // odd: a bijection of the 2^24 /24s
		add:  rng.Uint32() & 0xffffff,
	}, nil
}

// Next returns the next hit in event-time order.
func (g *Generator) Next() Hit {
	for g.pos >= len(g.buf) {
		g.fill()
	}
	h := g.buf[g.pos]
	g.pos++
	return h
}

// NextRead returns the site and page of the next public-count read: a
// registered site, and a page as popular as the traffic model views it
// (Zipf over the catalogue, or the hot page). It draws from the same
// random stream as Next.
func (g *Generator) NextRead() (site, page string) {
	site = g.mix.Sites[0]
	if len(g.mix.Sites) > 1 {
		site = g.mix.Sites[g.rng.IntN(len(g.mix.Sites))]
	}
	if g.mix.HotPage {
		return site, pagePath(0)
	}
	return site, g.page(int(g.zipf.Uint64()))
}

// All returns the next n hits.
func (g *Generator) All(n int) []Hit {
	hs := make([]Hit, n)
	for i := range hs {
		hs[i] = g.Next()
	}
	return hs
}

// fill builds the next round.
func (g *Generator) fill() {
	g.buf, g.pos = g.buf[:0], 0
	m := &g.mix
	for range m.Visitors {
		g.human()
	}
	g.sessions(Bot, m.Bots, g.botVisitor)
	g.sessions(Headless, m.Headless, func() visitor {
		v := g.browserVisitor(&browsers[chromeIndex])
		v.webdriver, v.beacon = true, g.rng.IntN(10) != 0
		return v
	})
	g.sessions(BadHints, m.BadHints, func() visitor {
		v := g.browserVisitor(&browsers[chromeIndex])
		v.beacon, v.hints = true, badHints(g.rng)
		return v
	})
	g.sessions(Datacenter, m.Datacenter, func() visitor {
		v := g.browserVisitor(pickBrowser(g.rng))
		v.ip = g.datacenterIP()
		return v
	})
	for range m.Spam {
		v := g.browserVisitor(pickBrowser(g.rng))
		g.session(Spam, v, 1, m.SpamReferrers[g.rng.IntN(len(m.SpamReferrers))])
	}
	g.sessions(UnknownSite, m.UnknownSite, func() visitor {
		v := g.browserVisitor(pickBrowser(g.rng))
		v.site = m.UnknownSites[g.rng.IntN(len(m.UnknownSites))]
		return v
	})
	g.flood()
	g.farm()
	g.sortByTime()
	g.round++
}

// hitKey is a hit's place in the round: its event time, then the order it
// was made in.
type hitKey struct {
	at time.Duration
	i  int
}

// sortByTime orders the round by event time, ties in the order the hits
// were made (what a stable sort gives), moving each hit once: sorting the
// large Hit values in place took half of the generator's time.
func (g *Generator) sortByTime() {
	keys := g.keys[:0]
	for i := range g.buf {
		keys = append(keys, hitKey{g.buf[i].At, i})
	}
	slices.SortFunc(keys, func(a, b hitKey) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.i, b.i))
	})
	sorted := g.spare[:0]
	for _, k := range keys {
		sorted = append(sorted, g.buf[k.i])
	}
	clear(g.buf) // drop the old round's strings
	g.buf, g.spare, g.keys = sorted, g.buf[:0], keys
}

// visitor is one client: what stays the same across its hits.
type visitor struct {
	site, ip, ua string
	b            *browser
	beacon       bool
	webdriver    bool
	hints        *Hints
}

func (g *Generator) browserVisitor(b *browser) visitor {
	v := visitor{
		site:   g.mix.Sites[g.rng.IntN(len(g.mix.Sites))],
		ip:     g.publicIP(),
		ua:     b.uas[g.rng.IntN(len(b.uas))],
		b:      b,
		beacon: g.rng.Float64() < g.mix.BeaconShare,
	}
	if v.beacon {
		v.hints = realHints(g.rng, b)
	}
	return v
}

func (g *Generator) botVisitor() visitor {
	v := visitor{
		site: g.mix.Sites[g.rng.IntN(len(g.mix.Sites))],
		ip:   g.publicIP(),
		ua:   bots[g.rng.IntN(len(bots))],
	}
	// Crawlers fetch the pixel URL; a few scripted clients post the
	// beacon JSON themselves, without hints.
	v.beacon = g.rng.IntN(5) == 0
	return v
}

// sessions makes visitors of class c until n hits are made, each visitor
// viewing 1–6 pages at a human pace, so only the class's own signal marks
// them.
func (g *Generator) sessions(c Class, n int, newVisitor func() visitor) {
	for n > 0 {
		k := min(g.viewCount(), n)
		g.session(c, newVisitor(), k, "")
		n -= k
	}
}

// viewCount is how many distinct pages a visitor views: 1–6, fewer more often.
func (g *Generator) viewCount() int {
	if g.mix.HotPage {
		return 1
	}
	w := [...]int{35, 22, 16, 12, 8, 7}
	n := g.rng.IntN(100)
	for i, x := range w {
		if n -= x; n < 0 {
			return i + 1
		}
	}
	return 1
}

// session emits k hits of v on distinct pages starting at a random time of
// the round, referred first by ref (or a random external referrer when ref
// is empty) and then by the visitor's previous page.
func (g *Generator) session(c Class, v visitor, k int, ref string) {
	if ref == "" {
		ref = g.externalReferrer()
	}
	t := g.start(sessionSpan)
	for _, p := range g.distinctPages(k) {
		g.emit(c, v, t, p, ref)
		if c != Spam {
			ref = "https://" + v.site + p
		}
		t += g.gap()
	}
}

// human emits one human visitor's session, maybe with a reload of one page
// and a retry of one hit.
func (g *Generator) human() {
	v := g.browserVisitor(pickBrowser(g.rng))
	k := g.viewCount()
	reloadAt := -1
	if g.rng.Float64() < g.mix.ReloadShare {
		reloadAt = g.rng.IntN(k)
	}
	retryAt := -1
	if g.rng.Float64() < g.mix.RetryShare {
		retryAt = g.rng.IntN(k)
	}
	ref := g.externalReferrer()
	t := g.start(sessionSpan)
	for i, p := range g.distinctPages(k) {
		j := g.emit(Human, v, t, p, ref)
		if i == retryAt {
			r := g.buf[j]
			r.Retry = true
			r.At += time.Second + g.dur(4*time.Second)
			g.buf = append(g.buf, r)
		}
		if i == reloadAt {
			// A reload keeps document.referrer.
			t += minGap + g.dur(3*time.Minute-minGap)
			g.emit(Reload, v, t, p, ref)
		}
		ref = "https://" + v.site + p
		t += g.gap()
	}
}

// flood is one visitor viewing FloodHits distinct pages within a minute.
func (g *Generator) flood() {
	n := g.mix.FloodHits
	if n == 0 {
		return
	}
	v := g.browserVisitor(pickBrowser(g.rng))
	t := g.start(time.Minute)
	step := time.Minute / time.Duration(n)
	ref := ""
	for _, p := range g.distinctPages(n) {
		g.emit(Flood, v, t, p, ref)
		ref = "https://" + v.site + p
		t += step
	}
}

// farm is one /24 sending FarmHits hits over ten minutes, each from another
// address of the network and another realistic browser, on distinct pages,
// with hints consistent with each claimed browser.
func (g *Generator) farm() {
	n := g.mix.FarmHits
	if n == 0 {
		return
	}
	nw := g.network()
	hosts := g.rng.Perm(254)
	ua0 := g.rng.IntN(maxFarmHits)
	site := g.mix.Sites[g.rng.IntN(len(g.mix.Sites))]
	t := g.start(10 * time.Minute)
	step := 10 * time.Minute / time.Duration(n)
	for i, p := range g.distinctPages(n) {
		ua, b := farmUA((ua0 + i) % maxFarmHits)
		ip := nw
		ip[3] = byte(1 + hosts[i%254])
		v := visitor{site: site, ip: netip.AddrFrom4(ip).String(), ua: ua, b: b, beacon: true, hints: realHints(g.rng, b)}
		g.emit(Farm, v, t+g.dur(step), p, "")
		t += step
	}
}

// emit appends one hit and returns its index in the round.
func (g *Generator) emit(c Class, v visitor, at time.Duration, page, ref string) int {
	n := g.seq[c]
	g.seq[c] = n + 1
	id := string(c) + "-"
	if g.mix.RunID != "" {
		id += g.mix.RunID + "-"
	}
	h := Hit{
		Class:     c,
		Beacon:    v.beacon,
		At:        time.Duration(g.round)*g.mix.Duration + at,
		Site:      v.site,
		Page:      page,
		Referrer:  ref,
		ID:        id + strconv.Itoa(n),
		UA:        v.ua,
		IP:        v.ip,
		Webdriver: v.webdriver,
	}
	if v.beacon && v.hints != nil {
		hints := *v.hints
		h.Hints = &hints
	}
	g.buf = append(g.buf, h)
	return len(g.buf) - 1
}

// minGap is the shortest time between two views of one visitor: ten views a
// minute at most, as a person reads.
const minGap = 6 * time.Second

// gap is the time to a visitor's next view: 6 s to 2 min, mostly short.
func (g *Generator) gap() time.Duration {
	return minGap + min(time.Duration(g.rng.ExpFloat64()*float64(25*time.Second)), 2*time.Minute-minGap)
}

// dur is a uniform duration in [0, d).
func (g *Generator) dur(d time.Duration) time.Duration {
	return time.Duration(g.rng.Int64N(int64(d)))
}

// start is a random offset in the round leaving span before its end.
func (g *Generator) start(span time.Duration) time.Duration {
	return g.dur(g.mix.Duration - span)
}

// distinctPages picks k distinct pages by popularity (or the hot page; or,
// for more pages than the catalogue has, pages beyond it).
func (g *Generator) distinctPages(k int) []string {
	ps := make([]string, 0, k)
	if g.mix.HotPage {
		for range k {
			ps = append(ps, pagePath(0))
		}
		return ps
	}
	if k > g.mix.Pages/4 {
		for _, i := range g.rng.Perm(max(g.mix.Pages, k))[:k] {
			ps = append(ps, g.page(i))
		}
		return ps
	}
	seen := make(map[uint64]bool, k)
	for len(ps) < k {
		i := g.zipf.Uint64()
		for tries := 0; seen[i] && tries < 20; tries++ {
			i = g.zipf.Uint64()
		}
		for seen[i] { // a heavy head: fall back to a uniform pick
			i = g.rng.Uint64N(uint64(g.mix.Pages))
		}
		seen[i] = true
		ps = append(ps, g.page(int(i)))
	}
	return ps
}

var sections = []string{"blog", "docs", "news", "guides", "products"}

// pageCache is how many of the most popular pages' paths a Generator keeps
// rather than building them for every hit: the head of the Zipf curve.
const pageCache = 4096

// page is pagePath(i), from the cache when popular.
func (g *Generator) page(i int) string {
	if i >= pageCache {
		return pagePath(i)
	}
	if g.pages == nil {
		g.pages = make([]string, pageCache)
	}
	if g.pages[i] == "" {
		g.pages[i] = pagePath(i)
	}
	return g.pages[i]
}

// pagePath is the i-th page of the catalogue; page 0 is the home page.
func pagePath(i int) string {
	if i == 0 {
		return "/"
	}
	return "/" + sections[i%len(sections)] + "/item-" + strconv.Itoa(i)
}

// externalReferrer is where a session comes from ("" = direct).
func (g *Generator) externalReferrer() string {
	refs := [...]struct {
		url string
		w   int
	}{
		{"", 45}, {"https://www.google.com/", 30}, {"https://www.bing.com/", 3}, {"https://duckduckgo.com/", 3},
		{"https://t.co/", 4}, {"https://www.facebook.com/", 4}, {"https://www.reddit.com/", 4},
		{"https://news.ycombinator.com/", 3}, {"https://chatgpt.com/", 2}, {"https://www.linkedin.com/", 2},
	}
	n := g.rng.IntN(100)
	for _, r := range refs {
		if n -= r.w; n < 0 {
			return r.url
		}
	}
	return ""
}

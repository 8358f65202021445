// Package judge holds the rules that judge every event: valid, or the
// reason it is rejected (a bot user agent, a headless browser, impossible
// browser hints, a request without the headers its claimed browser sends, a
// datacenter address or hosting network, an unknown site, a page on a host
// its site does not allow, referrer spam, a client retry, a flood from one
// visitor or network, a network rotating user agents, a repeated view, an
// operator's correction). The rules (Rules) are a pure function of the
// event sequence fed to them, clocked by the events' own receive times.
// They also give each event its dashboard dimensions (browser, OS, device
// class, referrer host and source, screen class: Rules.Dims), explain a
// verdict rule by rule (Rules.Explain), and name the rule set that decides
// verdicts (Config.RuleSet). Package validate runs them over the stream.
//
// It must never drop an event (a rejection is a verdict, not a deletion),
// never read the wall clock or draw randomness (a replay must rebuild the
// same state and so the same verdicts), never reach the stream or the store
// (TestRulesStayPure fails on an import of NATS, the store or its engines,
// on math/rand and on a call of time.Now and its kin), and never hold state
// that grows with the number of distinct keys beyond a fixed cap: windows
// are capped hash tables, rates live in fixed-size count-min sketches,
// cardinalities in capped HyperLogLog sketches.
package judge

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unsafe"

	"github.com/cespare/xxhash/v2"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/membudget"
)

// Config holds the rules' knobs. A zero field takes its default, so Config{}
// is DefaultConfig(); negative values are errors. The defaults and why they
// are what they are: see DefaultConfig.
type Config struct {
	// DuplicateWindow: a view of the same page of the same site by the same
	// visitor less than this after their previous view is a Duplicate.
	DuplicateWindow time.Duration
	// RetryWindow: an event whose (site, id) was seen less than this before
	// is a DuplicateID, a client retry.
	RetryWindow time.Duration
	// MaxKeys caps the keys each of the two windows remembers, per Rules
	// (one Rules per partition). See DefaultConfig for the sizing.
	MaxKeys int
	// MaxHeld bounds the valid views one partition holds for settling;
	// beyond it the oldest are settled early (see validate's holdQueue).
	MaxHeld int

	// ExtraBotPatterns are case-insensitive regular expressions (see
	// LoadPatterns) that mark a user agent as a bot, on top of the built-in
	// lists, or instead of them with ReplaceBotList.
	ExtraBotPatterns []string
	// ReplaceBotList: only ExtraBotPatterns decide BotUA; the built-in
	// tokens and the Crawler-Detect list are not consulted. For operators
	// who maintain the whole list in a file. With no patterns at all, no
	// user agent is a bot (EmptyUA still applies).
	ReplaceBotList bool

	// AllowMissingHints lets beacon events without hints pass BadHints. The
	// current tracker always sends them; set it while old copies of the
	// script may still be cached in browsers, or while the stream still
	// holds messages written before hints existed.
	AllowMissingHints bool
	// MaxScreenSize: a beacon reporting a screen side larger than this (CSS
	// pixels) is BadHints.
	MaxScreenSize int
	// ExtraHostingASNs are AS numbers whose views are Datacenter, on top of
	// the built-in hosting and cloud list (lists/hosting-asns.txt). The
	// check needs ingest to record AS numbers (--asn-db).
	ExtraHostingASNs []uint32

	// IgnoreHeaders turns the HeaderMismatch check off, for a deployment
	// behind a proxy that strips request headers browsers send (such as
	// Accept-Language); see headerMismatch.
	IgnoreHeaders bool

	// SpamReferrers are hosts (see LoadHosts) whose referrals are
	// BadReferrer, with their subdomains, on top of the built-in list
	// (lists/referrer-spam.txt), or instead of it with ReplaceSpamReferrers.
	SpamReferrers        []string
	ReplaceSpamReferrers bool

	// RateWindow is the sliding window over which views are counted per
	// visitor and per network. A visitor with more than VisitorRateLimit
	// views, or a network with more than NetworkRateLimit, within it makes
	// Rate views. Limits are at most 65534 (the counters are 16-bit).
	RateWindow       time.Duration
	VisitorRateLimit int
	NetworkRateLimit int
	// BlockRateLimit: an IPv6 /32 (viewcount.Event.Block) with more than
	// this many views of one page of one site within RateWindow makes Rate
	// views, whichever of its /48s and /64s they come from.
	BlockRateLimit int

	// RotationWindow: a network whose views carry more than RotationMaxUAs
	// distinct user agents within (between half and all of) this window
	// makes NetworkRotation views. Networks are tracked once they have
	// RotationMinEvents views in the window, at most RotationMaxNetworks of
	// them per half window (see rotation).
	RotationWindow      time.Duration
	RotationMaxUAs      int
	RotationMinEvents   int
	RotationMaxNetworks int

	// Corrections are the operators' exclusions in force (see viewcount.Correction):
	// loaded from the store at each partition's start.
	Corrections []viewcount.Correction

	// SettleWindow: valid views of watched visitors and networks (see
	// Watched) are held this long and rejected after all if their visitor
	// or network is flagged meanwhile (see settle.go). Negative turns
	// settling off.
	SettleWindow time.Duration

	// EngagementHorizon: an engagement report arriving more than this
	// after its view is EngagementLate (the visit stage, visits.go).
	EngagementHorizon time.Duration
	// MaxOpenViews and MaxVisits cap the visit stage's tables per Rules:
	// counted views a report may still name, and live visits.
	MaxOpenViews, MaxVisits int
}

// Budgets of one validating process, split among its partitions.
const (
	// ProcessWindowKeys: keys per duplicate window, 64 MiB of slots; the
	// two windows take 128 MiB at most.
	ProcessWindowKeys = 1 << 22
	// ProcessMaxHeld: views held for settling, ~400 MiB at most (a held
	// verdict and its strings are ~800 bytes, membudget.HeldBytes).
	ProcessMaxHeld = 1 << 19
	// ProcessOpenViews: views a report may still name, ~115 MiB at most
	// (~115 bytes each: the entry, its map slot and its place in the
	// expiry order); at 1,000 views/s a process keeps each open for 17
	// minutes, and reports mostly come within seconds of the view
	// (docs/engagement.md).
	ProcessOpenViews = 1 << 20
	// ProcessVisits: live visits, ~260 MiB at most (~520 bytes each with
	// their entry page and referrer, membudget.VisitBytes); a visit is
	// live for VisitGap after its last view.
	ProcessVisits = 1 << 19
)

// DefaultConfig returns the defaults.
//
// MaxKeys and MaxHeld are a quarter of the process budgets
// (ProcessWindowKeys, ProcessMaxHeld): one partition's share in a process
// validating four. A validate.Validator (validate.New) left to its
// defaults splits the budgets among the partitions it validates instead.
//
// MaxKeys is 1<<20 because a remembered key costs 16 bytes (a slot of the
// window's table, which never holds more than MaxKeys slots), so a full
// window is 16 MiB and the two 32 MiB whatever the traffic: a hard ceiling
// an operator can plan for. 1M keys hold every view of a partition
// taking ~500 views/s for the 30-minute window. For ids they hold a full 24
// hours only up to ~12 events/s per partition; beyond that the oldest ids
// are forgotten early, which matters only for retries arriving hours late,
// and those are rare (a retry usually follows within seconds).
//
// MaxScreenSize 16384: the largest screens sold (8K, 7680 px wide) report
// at most that at 100% scaling; 16384 leaves room for zoomed-out pages and
// is far from what a broken script reports (0, or 65535 when clamped).
//
// VisitorRateLimit 30 per minute: a person reading pages rarely opens more
// than 10-15 a minute even when skimming, and a visitor id is per site, IP
// and user agent, so people behind one NAT with the same browser build share
// one; 30 leaves room for both, and a bot refreshing a page to inflate its
// count goes far beyond it.
//
// NetworkRateLimit 600 per minute (10 views/s) per IPv4 /24 or IPv6 /48:
// a /24 is up to 254 households, an office NAT or a carrier's CGNAT pool
// shared by many people, so its limit is twenty visitors' worth; a farm
// inflating counts from one rented range needs far more to matter.
// Deployments with very large audiences behind mobile carriers should raise
// it.
//
// BlockRateLimit 1200 views of one page per minute (20/s) per IPv6 /32: a
// /32 is a provider's block, and each /48 of it a new network to the limit
// above, so a flood sent one /48 (or /64) per view escaped every network
// limit; this caps what a /32 adds to one page at two /48s' worth. A
// mobile carrier's /32 holds millions of phones, so the limit is per page,
// not per /32: a busy site's real audience from one carrier /32 is a share
// of each page's (a carrier has 10-30% of a country's mobile traffic, and
// spreads it over several /32s), so a page reaches 1200 a minute from one
// /32 only at several thousand views a minute in all, a viral page of one
// of the busiest sites a self-hosted deployment serves (TestIPv6BlockRealAudience:
// 2,000 a minute from one /32, 800 of them on one page, all counted).
// Deployments with larger audiences should raise it (--block-rate).
//
// RotationMaxUAs 50 distinct user agents per network in 10 minutes: user-agent
// reduction makes real people of one network share few strings (Chrome
// reports "Chrome/131.0.0.0" on a handful of frozen platform strings, Safari
// a frozen macOS version), so even a busy office shows a few dozen at most;
// a farm replaying a list of UAs to fake distinct people passes 50 within
// minutes. Not 20: in-app browsers (Facebook, Instagram) put app version and
// device model in their UA, and a carrier CGNAT range with a few dozen such
// readers of one deployment would pass 20.
//
// SettleWindow 2 minutes: a farm at 30 new user agents a minute passes 50 in
// under two minutes and a flood passes its limit within seconds, so holding
// watched views this long rejects those attacks from their first watched
// view instead of from the view that crossed the threshold. Only watched
// views wait: a visitor at 5+ views a minute, a network at 100+ views a
// minute or 10+ in the rotation window; nearly all views are written at once.
//
// RotationMinEvents 10: networks with fewer views in the window (nearly all
// of them) cost no sketch; detection then comes at most 9 views late.
// RotationMaxNetworks 1<<16 busy networks per half window: a latched or
// small sparse sketch costs ~340 bytes (BenchmarkRotationFull), so ~45 MiB at most per
// Rules.
func DefaultConfig() Config {
	return Config{
		DuplicateWindow:     30 * time.Minute,
		RetryWindow:         24 * time.Hour,
		MaxKeys:             ProcessWindowKeys / 4,
		MaxHeld:             ProcessMaxHeld / 4,
		MaxScreenSize:       16384,
		RateWindow:          time.Minute,
		VisitorRateLimit:    30,
		NetworkRateLimit:    600,
		BlockRateLimit:      1200,
		RotationWindow:      10 * time.Minute,
		RotationMaxUAs:      50,
		RotationMinEvents:   10,
		RotationMaxNetworks: 1 << 16,
		SettleWindow:        2 * time.Minute,
		EngagementHorizon:   viewcount.EngagementHorizon,
		MaxOpenViews:        ProcessOpenViews / 4,
		MaxVisits:           ProcessVisits / 4,
	}
}

// maxRateLimit: the rate counters are 16-bit and saturate at 65535, so
// the highest limit they can tell apart from "more" is one less.
const maxRateLimit = math.MaxUint16 - 1

// WithDefaults is c with every zero field set to its default (DefaultConfig),
// or an error naming a field out of its range.
func (c Config) WithDefaults() (Config, error) {
	d := DefaultConfig()
	for _, w := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
		min  time.Duration
	}{
		{"DuplicateWindow", &c.DuplicateWindow, d.DuplicateWindow, time.Millisecond},
		{"RetryWindow", &c.RetryWindow, d.RetryWindow, time.Millisecond},
		{"RateWindow", &c.RateWindow, d.RateWindow, time.Millisecond},
		// Two buckets of at least 1ms each.
		{"RotationWindow", &c.RotationWindow, d.RotationWindow, 2 * time.Millisecond},
		{"EngagementHorizon", &c.EngagementHorizon, d.EngagementHorizon, time.Millisecond},
	} {
		switch {
		case *w.v == 0:
			*w.v = w.def
		case *w.v < w.min:
			// Event times have millisecond precision.
			return c, fmt.Errorf("validate: %s %v: must be at least %v", w.name, *w.v, w.min)
		}
	}
	if c.SettleWindow == 0 {
		c.SettleWindow = d.SettleWindow
	}
	for _, n := range []struct {
		name     string
		v        *int
		def, max int
	}{
		{"MaxKeys", &c.MaxKeys, d.MaxKeys, math.MaxInt},
		{"MaxHeld", &c.MaxHeld, d.MaxHeld, math.MaxInt},
		{"MaxOpenViews", &c.MaxOpenViews, d.MaxOpenViews, math.MaxInt},
		{"MaxVisits", &c.MaxVisits, d.MaxVisits, math.MaxInt},
		{"MaxScreenSize", &c.MaxScreenSize, d.MaxScreenSize, math.MaxInt},
		{"VisitorRateLimit", &c.VisitorRateLimit, d.VisitorRateLimit, maxRateLimit},
		{"NetworkRateLimit", &c.NetworkRateLimit, d.NetworkRateLimit, maxRateLimit},
		{"BlockRateLimit", &c.BlockRateLimit, d.BlockRateLimit, maxRateLimit},
		{"RotationMaxUAs", &c.RotationMaxUAs, d.RotationMaxUAs, math.MaxInt},
		{"RotationMinEvents", &c.RotationMinEvents, d.RotationMinEvents, maxRateLimit},
		{"RotationMaxNetworks", &c.RotationMaxNetworks, d.RotationMaxNetworks, math.MaxInt},
	} {
		switch {
		case *n.v == 0:
			*n.v = n.def
		case *n.v < 0:
			return c, fmt.Errorf("validate: %s %d: must not be negative", n.name, *n.v)
		case *n.v > n.max:
			return c, fmt.Errorf("validate: %s %d: must be at most %d", n.name, *n.v, n.max)
		}
	}
	return c, nil
}

// Rules is the chain of checks every event goes through, with the state the
// stateful checks need. It is not safe for concurrent use: each partition's
// consumer owns one, which is also what keeps its verdicts a function of that
// partition's stream order.
type Rules struct {
	cfg      Config
	sites    SiteLookup
	hosts    viewcount.HostLookup // sites' hostnames; nil when sites keeps none
	ua       *uaMatcher
	spam     spamReferrers
	excluded corrections
	allowed  allows
	hosting  hostingASNs
	sources  *sources
	hints    hintLimits
	ids      window // hash(site, id) → last seen
	views    window // hash(visitor, site, page) → last seen
	rate     rateLimiter
	rotation rotation
	flags    flags
	visits   visitState
	// Views of a visitor, network or block at these estimates are watched
	// (held and settled): a sixth of the limits.
	watchVisitor, watchNetwork, watchBlock uint64
	now                                    int64  // latest event time seen, Unix ms: the rules' only clock
	buf                                    []byte // scratch for building hash keys
	lastBlockKey                           uint64 // the block key of the last view rated (blockKey), for raise
}

// NewRules returns rules configured by cfg that look sites up in sites. It
// fails on a negative or too short window, a negative or out-of-range
// number, a bad extra pattern or spam host, or a nil sites.
func NewRules(cfg Config, sites SiteLookup) (*Rules, error) {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, err
	}
	if sites == nil {
		return nil, errors.New("validate: no site lookup")
	}
	ua, err := newUAMatcher(cfg.ExtraBotPatterns, cfg.ReplaceBotList)
	if err != nil {
		return nil, err
	}
	spam, err := newSpamReferrers(cfg.SpamReferrers, cfg.ReplaceSpamReferrers)
	if err != nil {
		return nil, err
	}
	src, err := newSources()
	if err != nil {
		return nil, err
	}
	hosting, err := newHostingASNs(cfg.ExtraHostingASNs)
	if err != nil {
		return nil, err
	}
	excluded, allowed, err := newCorrections(cfg.Corrections)
	if err != nil {
		return nil, err
	}
	hosts, _ := sites.(viewcount.HostLookup)
	return &Rules{
		hosts:        hosts,
		excluded:     excluded,
		allowed:      allowed,
		hosting:      hosting,
		cfg:          cfg,
		sources:      src,
		sites:        sites,
		ua:           ua,
		spam:         spam,
		hints:        hintLimits{maxScreen: cfg.MaxScreenSize, allowAbsent: cfg.AllowMissingHints},
		ids:          newWindow(cfg.RetryWindow.Milliseconds(), cfg.MaxKeys),
		views:        newWindow(cfg.DuplicateWindow.Milliseconds(), cfg.MaxKeys),
		rate:         newRateLimiter(cfg),
		rotation:     newRotation(cfg),
		flags:        newFlags(cfg.SettleWindow + cfg.RotationWindow + cfg.RateWindow),
		visits:       newVisitState(cfg),
		watchVisitor: uint64(max(2, cfg.VisitorRateLimit/6)),
		watchNetwork: uint64(max(2, cfg.NetworkRateLimit/6)),
		watchBlock:   uint64(max(2, cfg.BlockRateLimit/6)),
		now:          math.MinInt64,
	}, nil
}

// Judge returns the verdict for e and updates the state. The checks run in
// this order and the first that fails decides:
//
//  1. EmptyUA: no user agent (or only spaces).
//  2. BotUA: a crawler, HTTP library, headless browser, AI crawler, monitor or
//     link previewer, by user agent (or only by ExtraBotPatterns, with
//     ReplaceBotList).
//  3. Headless: the page reported navigator.webdriver, or a desktop browser
//     reported a screen no person looks at (see headlessScreen).
//  4. BadHints: a beacon event whose browser hints are missing or impossible
//     for the browser its user agent names (see badHints). Pixel events
//     carry no hints and skip this.
//  5. HeaderMismatch: the request lacked headers the browser its user agent
//     names always sends, or carried ones it never sends (see
//     headerMismatch; off with IgnoreHeaders).
//  6. Datacenter: ingest found the client address in a datacenter range,
//     or its AS number is a hosting or cloud network's (hostingASNs).
//  7. UnknownSite: the site is not registered, or was not when the view
//     came: a view received before its site's current registration
//     (viewcount.InRegistration), in flight while the site was deleted
//     and added again, counts for neither.
//  8. ForeignOrigin: the request named the page it came from (Origin or
//     Referer header, else the tracker's report: viewcount.Event.Origin)
//     and the site's hostnames in force when the view came do not allow
//     that host (see foreignOrigin). A view naming no page is not judged.
//  9. BadReferrer: the referrer's host, or a parent domain of it, is on the
//     spam list.
//  10. Excluded: an operator's correction (Corrections) excludes the view's
//     network, AS number, referrer or path for its time.
//  11. DuplicateID: the same (site, event id) was seen less than RetryWindow
//     ago; only for events with an id.
//  12. Rate: the visitor made more than VisitorRateLimit views, or its
//     network more than NetworkRateLimit, or its IPv6 /32 more than
//     BlockRateLimit of this page, within RateWindow (this view included).
//  13. NetworkRotation: the network's views carry more than RotationMaxUAs
//     distinct user agents within RotationWindow.
//  14. Duplicate: the same visitor viewed the same page of the same site less
//     than DuplicateWindow ago.
//
// An operator's allow correction (Corrections, viewcount.KindAllow) restores what
// checks 2-6, 9, 12 and 13 reject (viewcount.Restorable) for the views it names: the
// check is passed over and judging goes on, so an allowed view can still be
// Excluded (an exclusion always wins), a DuplicateID or a Duplicate. A
// ForeignOrigin is not restorable: the site's hostnames say where it may be
// shown, and adding the host there is the correction.
//
// Checks 1-10 are stateless, and events they reject leave no state behind:
// bots, datacenter traffic and junk for unregistered sites cannot fill the
// capped windows and push out real visitors' keys, nor count against the
// rate of the real people sharing their network. A DuplicateID is the same
// view delivered again, not new traffic, so it touches nothing else either.
//
// Every other event updates all of the stateful checks (the rate counters,
// the rotation sketches and the view window) before the verdict is chosen,
// whatever that verdict is. So each kind of state is a function of the
// events alone, never of other checks' verdicts: a Rate view still counts
// towards its visitor's rate (a flood stays flagged while it lasts) and
// still refreshes the view window. That is what keeps a bounded replay
// exact: no verdict depends on a chain of earlier verdicts.
//
// The windows slide: every sighting that reaches a check refreshes its key
// (a retry of a retry is still a retry; a visitor who reloads a page every ten
// minutes for an hour makes one view, the way a 30-minute-inactivity visit
// works in Plausible or Google Analytics). With a window measured only from
// the last counted view, whether a view counts would hinge on a chain of
// earlier verdicts reaching back indefinitely.
//
// "Less than the window ago" is measured from the latest event time seen so
// far, not from e.Time, so an event arriving out of order is never judged
// against state that has already expired. Exactly one window later counts.
// The rate and rotation buckets follow the same clock.
func (r *Rules) Judge(e *viewcount.Event) viewcount.Reason {
	reason, _ := r.judge(e)
	return reason
}

// judge is Judge, returning the user agent's memoised facts too (zero for
// an empty user agent).
func (r *Rules) judge(e *viewcount.Event) (viewcount.Reason, uaInfo) {
	t := e.Time.UnixMilli()
	if t > r.now {
		r.now = t
	}
	if strings.TrimSpace(e.UA) == "" {
		return viewcount.EmptyUA, uaInfo{dims: uaDims{device: DeviceOther}}
	}
	ua := r.ua.info(e.UA)
	return r.judgeUA(e, ua, t), ua
}

func (r *Rules) judgeUA(e *viewcount.Event, ua uaInfo, t int64) viewcount.Reason {
	// reject: the rule that found reason rejects e, unless an operator's
	// allow correction restores it (judging then goes on with the rules
	// after it, exclusions and duplicates included).
	reject := func(reason viewcount.Reason) bool {
		return len(r.allowed) == 0 || r.allowed.match(e, ua.dims.browser, reason, t) == ""
	}
	if ua.bot && reject(viewcount.BotUA) {
		return viewcount.BotUA
	}
	if (e.Webdriver || e.Source == viewcount.SourceBeacon && headlessScreen(e, ua)) && reject(viewcount.Headless) {
		return viewcount.Headless
	}
	if e.Source == viewcount.SourceBeacon && badHints(e, ua, r.hints) && reject(viewcount.BadHints) {
		return viewcount.BadHints
	}
	if !r.cfg.IgnoreHeaders && headerMismatch(e, ua) && reject(viewcount.HeaderMismatch) {
		return viewcount.HeaderMismatch
	}
	if (e.Datacenter || r.hosting.has(e.ASN)) && reject(viewcount.Datacenter) {
		return viewcount.Datacenter
	}
	if !viewcount.InRegistration(r.sites, e.Site, e.Time) {
		return viewcount.UnknownSite
	}
	if foreignOrigin(e, r.hosts) {
		return viewcount.ForeignOrigin
	}
	if r.spam.match(e.Referrer) != "" && reject(viewcount.BadReferrer) {
		return viewcount.BadReferrer
	}
	if r.excluded.match(e, t) != "" {
		return viewcount.Excluded
	}
	if e.ID != "" && r.ids.seen(r.idKey(e), t, r.now) {
		return viewcount.DuplicateID
	}
	r.lastBlockKey = r.blockKey(e)
	rate := r.rate.over(e.Visitor, e.Network, r.lastBlockKey, r.now)
	rotating := r.rotation.rotating(e.Network, ua.hash, r.now)
	dup := r.views.seen(r.viewKey(e), t, r.now)
	if rate || rotating {
		r.raise(e, rotating)
	}
	switch {
	case rate && reject(viewcount.Rate):
		return viewcount.Rate
	case rotating && reject(viewcount.NetworkRotation):
		return viewcount.NetworkRotation
	case dup:
		return viewcount.Duplicate
	}
	return viewcount.Valid
}

// Keys are 64-bit xxhash values: deterministic across processes and
// restarts (unlike hash/maphash), and at a million keys the chance of any two
// colliding is ~3e-8. The NUL separator keeps ("ab","c") apart from ("a","bc").
func (r *Rules) idKey(e *viewcount.Event) uint64 {
	b := append(r.buf[:0], e.Site...)
	b = append(b, 0)
	b = append(b, e.ID...)
	r.buf = b
	return xxhash.Sum64(b)
}

// blockKey is the key of the view's IPv6 /32 and its page of its site,
// which BlockRateLimit applies to; 0 when the view has no block (IPv4, an
// unknown address, a view from before blocks were keyed).
func (r *Rules) blockKey(e *viewcount.Event) uint64 {
	block, ok := e.Block()
	if !ok {
		return 0
	}
	b := binary.LittleEndian.AppendUint64(r.buf[:0], block)
	b = append(b, e.Site...)
	b = append(b, 0)
	b = append(b, e.Page...)
	r.buf = b
	return xxhash.Sum64(b) | 1 // never 0, which means none
}

func (r *Rules) viewKey(e *viewcount.Event) uint64 {
	b := binary.LittleEndian.AppendUint64(r.buf[:0], e.Visitor)
	b = append(b, e.Site...)
	b = append(b, 0)
	b = append(b, e.Page...)
	r.buf = b
	return xxhash.Sum64(b)
}

// Config is the configuration r judges by, its defaults filled in.
func (r *Rules) Config() Config { return r.cfg }

// Reset forgets all state and the clock, as before a replay. The memoized
// user-agent facts are kept: they are not state, only speed.
func (r *Rules) Reset() {
	r.ids.reset()
	r.views.reset()
	r.rate.reset()
	r.rotation.reset()
	r.flags.reset()
	r.visits.reset()
	r.now = math.MinInt64
}

// ReplayWindow is how far back a verdict can depend on earlier events. The
// stateful checks look back at most DuplicateWindow (the view window),
// 2×RateWindow (the current and previous rate buckets, aligned to absolute
// time, so the previous one starts up to two windows back) and
// RotationWindow (the older generation of sketches spans two half-window
// buckets). Which events entered that state depends in turn on whether each
// was a DuplicateID, which depends on the ids of the RetryWindow before it.
// Replaying at least this much of a partition (plus any gap between receive
// and stream time) into fresh Rules rebuilds state that gives the same
// verdicts as an uninterrupted run, as long as no cap (MaxKeys,
// RotationMaxNetworks) was reached in that stretch.
//
// Settling adds SettleWindow: a view held before the resume point may be
// released after it, so its message must be replayed too, and its settling
// reads flags raised up to a rate window before it.
func (r *Rules) ReplayWindow() time.Duration {
	return r.cfg.RetryWindow + max(r.cfg.DuplicateWindow, 2*r.cfg.RateWindow, r.cfg.RotationWindow) +
		r.SettleWindow() + r.cfg.RateWindow
}

// ReplayStart is where a replay must begin for the verdicts and the visit
// stage's rows after resume to equal an uninterrupted run's. The stage's
// state at resume depends on the counted views of the visits still open
// then: those of resume's UTC day (a visit never spans midnight) and of
// the day before for views a report may still name (EngagementHorizon).
// Those views' verdicts must be exact in turn, so the replay starts one
// ReplayWindow before the first of them: between 25 and 50 hours before
// resume with the defaults, where the rules alone need 24.6.
func (r *Rules) ReplayStart(resume time.Time) time.Time {
	since := resume.Add(-r.cfg.EngagementHorizon).UTC().Truncate(24 * time.Hour)
	return since.Add(-r.ReplayWindow())
}

// VisitReach is the receive time after which the visit stage's rows no
// longer depend on a verdict at t: a visit never spans UTC midnight, and
// the views of t's day stay open to their reports for the horizon plus
// the sixth of it they are kept past it (EngagementLate, not an orphan).
// A revalidation that changes verdicts up to t recomputes the visit rows
// up to here.
func (r *Rules) VisitReach(t time.Time) time.Time {
	h := r.cfg.EngagementHorizon
	return t.UTC().Truncate(24 * time.Hour).Add(24*time.Hour + h + h/6)
}

// Stats describes the rules' state, for gauges and capacity planning.
type Stats struct {
	// Keys in the retry and view windows (each ≤ MaxKeys), counting
	// expired ones until a new key takes their slot.
	IDs, Views int
	// Networks holding a rotation sketch or latch, over both live
	// generations (≤ 2×RotationMaxNetworks).
	RotationNetworks int
	// RotationUntracked counts views of busy networks that found their
	// generation full since the last Reset: non-zero means
	// RotationMaxNetworks is too small for the traffic (or someone is
	// flooding it).
	RotationUntracked uint64
	SketchBytes       int // the fixed count-min sketches (rate and rotation gate)
	// OpenViews and Visits are the visit stage's tables (≤ MaxOpenViews,
	// MaxVisits).
	OpenViews, Visits int
	// Bytes estimates what all of r's state holds: the windows' tables as
	// allocated, the sketches, and the other tables at their measured cost
	// per entry (TestStatsBytes checks the estimate against the heap).
	Bytes int64
}

// Costs per entry of the tables: a window's slot as allocated; the
// visit stage's entries as the memory budget sizes them (membudget, from
// a heap profile at 20k views/s; TestStatsBytes); a tracked rotation
// network.
const (
	slotBytes            = int64(unsafe.Sizeof(slot{}))
	rotationNetworkBytes = 340
)

// Stats returns the current Stats.
func (r *Rules) Stats() Stats {
	st := Stats{
		IDs: r.ids.n, Views: r.views.n,
		RotationNetworks:  r.rotation.tracked(),
		RotationUntracked: r.rotation.untracked,
		SketchBytes:       r.rate.bytes() + r.rotation.gate.bytes(),
		OpenViews:         len(r.visits.views),
		Visits:            len(r.visits.visits),
	}
	st.Bytes = int64(len(r.ids.slots)+len(r.views.slots))*slotBytes + int64(st.SketchBytes) +
		int64(st.OpenViews)*membudget.OpenViewBytes + int64(st.Visits)*membudget.VisitBytes + int64(st.RotationNetworks)*rotationNetworkBytes
	return st
}

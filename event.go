package viewcount

import (
	"strconv"
	"time"
)

// Event is one page view as ingest publishes it. Time is the server's receive
// time (the client's clock is not trusted). Visitor and Network are keyed
// hashes; the raw IP never reaches this type.
type Event struct {
	Time      time.Time // UTC, millisecond precision
	Site      string    // normalised domain, e.g. "example.com"
	Page      string    // normalised path, e.g. "/blog/post"
	Referrer  string    // scheme://host/path of the referring page, no query
	UA        string    // user agent, length-capped
	ID        string    // event id: the client's, or one ingest generated
	Visitor   uint64    // hash(daily salt, site, IPv4 address or IPv6 /64, UA); its low 32 bits are its partition key (NetworkKey)
	Network   uint64    // hash(daily salt, IPv4 /24 or IPv6 /48)
	Webdriver bool      // the beacon reported navigator.webdriver
	Source    Source    // which endpoint received it
	// Datacenter is set by ingest when the client IP lies in a configured
	// datacenter range: the one signal that needs the IP itself, so it is
	// decided before the IP is dropped.
	Datacenter bool
	Hints      Hints // what the beacon script reported; zero for the pixel
	// UTM is read by ingest from the page URL's query before the query is
	// normalised away; Country from a trusted CDN header or the country
	// database, while ingest still has the IP. Both travel in the stream.
	UTM     UTM
	Country string // ISO 3166-1 alpha-2, upper case; "" when unknown
	// Headers records, as HeaderFlags, what the request carried of what a
	// browser's request for that endpoint carries. Ingest decides them
	// (the headers themselves never leave it); the header rule judges them
	// against the browser the user agent claims.
	Headers HeaderFlags
	// ASN is the autonomous system the client address belongs to (0 =
	// unknown), looked up by ingest before the IP is dropped. A network's
	// operator is not personal data, and it tells an operator which
	// provider a datacenter view came from.
	ASN uint32
	// Origin is the host of the page the view was sent from, lower case,
	// without port ("blog.example.com", "localhost", "127.0.0.1"), as the
	// request showed it: the Origin header, else the Referer's host (what
	// the browser says, which a page's script cannot change), else the
	// host the tracker reported; "" when the request said nothing of its
	// page (a stripped Referer, a server-side client). The validator
	// judges it against the site's hostnames (ForeignOrigin); "" is no
	// evidence, never a foreign origin.
	Origin string
	// Kind is KindView for a page view, KindEngagement for the tracker's
	// report of how long an earlier view was looked at (Engagement). An
	// engagement names its view by ID and Page, and arrives from the same
	// browser, so it carries the same Visitor: the validator attaches it to
	// that view, never judges it as a view (docs/engagement.md).
	Kind       Kind
	Engagement Engagement // zero for a view
}

// Kind says what an event records.
type Kind uint8

const (
	KindView       Kind = 0 // a page view: what every event was before engagement existed
	KindEngagement Kind = 1 // an engagement report for the view whose id it carries
)

func (k Kind) String() string {
	switch k {
	case KindView:
		return "view"
	case KindEngagement:
		return "engagement"
	}
	return "unknown"
}

// Engagement is what vc.js reports of a view after it was sent: when the
// page is hidden, unloaded or left by an SPA navigation, and again when the
// visitor comes back and adds time. The values are cumulative for the
// view, so a lost report loses nothing a later one carries, and a repeated
// one adds nothing.
type Engagement struct {
	// EngagedMS is the time the page was visible and focused since the
	// view was sent, in milliseconds: not while in the background,
	// prerendered or frozen in the back-forward cache.
	EngagedMS uint32
	// Scroll is the deepest point of the document reached, in percent of
	// its height (0-100; a page that fits the window is 100).
	Scroll uint8
	// AgeMS is the time since the view was sent by the tracker's clock.
	// Untrusted: ingest uses it only to find the view's day (its visitor-id
	// salt) for a report that arrives after 00:00 UTC, and the validator to
	// refuse a report older than its horizon without looking the view up.
	AgeMS uint32
}

// HeaderFlags are the request-consistency facts ingest records for a hit.
// Each bit says the request carried something a browser's request of that
// kind (an <img> for the pixel, sendBeacon or fetch for the beacon)
// carries; which browsers send what, and since which version, is the
// validator's business (validate's header rule). Zero is what events from
// before the flags existed hold: nothing is judged on them then, because
// HeadersSeen is unset.
type HeaderFlags uint16

const (
	// HeadersSeen marks an event whose headers ingest examined; without it
	// the other bits mean nothing (events published before version 4).
	HeadersSeen HeaderFlags = 1 << iota
	// HeaderFetchMeta: Sec-Fetch-Site, Sec-Fetch-Mode and Sec-Fetch-Dest
	// were all present (Chromium ≥ 80, Firefox ≥ 90, Safari ≥ 16.4 send
	// them to potentially trustworthy URLs).
	HeaderFetchMeta
	// HeaderFetchFits: their values are a subresource request's: site
	// same-origin, same-site or cross-site (not "none"), mode no-cors or
	// cors, dest image or empty for the pixel (<img>, or fetch()), empty
	// for the beacon (sendBeacon, fetch).
	HeaderFetchFits
	// HeaderAccept: Accept fits the endpoint: it names an image type
	// ("image/…") for the pixel; it is present for the beacon.
	HeaderAccept
	// HeaderAcceptLanguage: Accept-Language was present and not empty.
	HeaderAcceptLanguage
	// HeaderClientHints: Sec-CH-UA was present (Chromium ≥ 89, only in a
	// secure context; Firefox and Safari never send it).
	HeaderClientHints
	// HeaderHintsAgree: Sec-CH-UA's "Chromium" brand names the same major
	// version as the user agent's "Chrome/" token. Meaningful only with
	// HeaderClientHints.
	HeaderHintsAgree
	// HeaderHeadlessBrand: Sec-CH-UA names a "Headless…" brand, which only
	// headless Chromium sends whatever its user agent says.
	HeaderHeadlessBrand
	// HeaderSecure: the request reached ingest over TLS, through a trusted
	// proxy that says it did (X-Forwarded-Proto), or at a loopback host:
	// the conditions under which browsers send Sec-Fetch-* and Sec-CH-UA
	// at all (a "potentially trustworthy" URL).
	HeaderSecure
)

// Has reports whether every bit of want is set.
func (f HeaderFlags) Has(want HeaderFlags) bool { return f&want == want }

// headerNames name the bits, in order, for String.
var headerNames = [...]string{"seen", "fetch", "fetch-fits", "accept", "accept-language",
	"client-hints", "hints-agree", "headless-brand", "secure"}

// String lists the set bits ("seen|secure|accept"), for logs and reports.
func (f HeaderFlags) String() string {
	var b []byte
	for i, name := range headerNames {
		if f&(1<<i) != 0 {
			if len(b) > 0 {
				b = append(b, '|')
			}
			b = append(b, name...)
		}
	}
	if rest := f &^ (1<<len(headerNames) - 1); rest != 0 {
		if len(b) > 0 {
			b = append(b, '|')
		}
		b = strconv.AppendUint(append(b, "0x"...), uint64(rest), 16)
	}
	return string(b)
}

// UTM is a view's campaign tags, lower-cased and length-capped by ingest.
type UTM struct {
	Source, Medium, Campaign string
}

// Dims are the dashboard dimensions a validator derives from an event
// (once per distinct user agent or referrer, memoised): they are stored on
// views_raw and rolled up per site, day and value. "" means unknown, which
// is what rows written before they existed hold.
type Dims struct {
	RefHost   string // the referring page's host; "" for direct and internal (same-site) referrers
	RefSource string // grouped source ("Google", "Reddit", …), the host when not a known one, "(direct)" when none
	Browser   string // e.g. "Chrome", "Firefox", "Safari"
	OS        string // e.g. "Windows", "iOS", "Android"
	Device    string // "desktop", "mobile", "tablet" or "other"
	Screen    string // screen class from the beacon's hints: "mobile", "tablet", "laptop", "desktop"; "" for the pixel
}

// Hints are the browser facts the beacon script reports beside
// navigator.webdriver. Automation frameworks and scripted clients tend to
// omit them or report combinations no real browser produces.
type Hints struct {
	Present   bool   // the request carried hints at all
	ScreenW   uint16 // screen.width in CSS pixels
	ScreenH   uint16 // screen.height
	Languages uint8  // len(navigator.languages), capped at 255
	TZ        bool   // a time zone was reported (Intl)
	UAData    bool   // navigator.userAgentData exists (Chromium ≥ 90, secure contexts)
	Secure    bool   // window.isSecureContext
	// Window says the tracker reported the browser window's outer size:
	// OuterW × OuterH, window.outerWidth and outerHeight in CSS pixels,
	// read once the page has drawn a frame. Trackers before that one read
	// it at script start, when Chromium often still reads 0 × 0; older
	// ones, and current ones on a hidden page that is not yet sized, send
	// none. Recorded for analysts; no rule judges it
	// (docs/invalid-traffic.md).
	Window         bool
	OuterW, OuterH uint16
}

// Source says which endpoint an event came through.
type Source uint8

const (
	SourcePixel  Source = 1 // GET /p.gif
	SourceBeacon Source = 2 // POST /v1/events
)

func (s Source) String() string {
	switch s {
	case SourcePixel:
		return "pixel"
	case SourceBeacon:
		return "beacon"
	}
	return "unknown"
}

// Reason is the verdict on an event: Valid, or why it was rejected. The
// string is what views_raw stores and what reports group by, so existing
// values must never be renamed.
type Reason string

const (
	Valid       Reason = "valid"
	BotUA       Reason = "bot_ua"       // user agent of a known crawler, tool or headless browser
	EmptyUA     Reason = "empty_ua"     // no user agent at all
	Headless    Reason = "headless"     // the page reported navigator.webdriver
	UnknownSite Reason = "unknown_site" // the site is not registered, or was not when the view came (InRegistration)
	DuplicateID Reason = "duplicate_id" // the same event id seen within 24 h (a client retry)
	Duplicate   Reason = "duplicate"    // the same visitor viewed the same page within the window

	BadHints        Reason = "bad_hints"        // beacon hints missing or impossible for the claimed browser
	HeaderMismatch  Reason = "header_mismatch"  // the request lacks headers the claimed browser always sends
	Datacenter      Reason = "datacenter"       // client IP in a datacenter range
	BadReferrer     Reason = "bad_referrer"     // referrer host on the spam list
	Excluded        Reason = "excluded"         // an operator's correction excludes it (viewcount correct)
	Rate            Reason = "rate"             // the visitor or its network exceeded the rate limit
	NetworkRotation Reason = "network_rotation" // one network rotating through many user agents / visitor ids
	ForeignOrigin   Reason = "foreign_origin"   // a browser view from a page on a host the site does not allow (HostLookup)

	// The reasons an engagement report (KindEngagement) is refused; an
	// accepted one is Valid. None of them ever changes its view's verdict.
	EngagementOrphan    Reason = "engagement_orphan"    // no counted view of that id, page and visitor is open (never seen, rejected, evicted)
	EngagementLate      Reason = "engagement_late"      // the report came more than the horizon after its view
	EngagementRepeat    Reason = "engagement_repeat"    // it adds neither engaged time nor scroll depth to what the view's earlier reports said
	EngagementOverclaim Reason = "engagement_overclaim" // it claims more engaged time than passed since the view arrived
)

// Reasons lists every verdict, valid first; metrics and reports iterate it.
var Reasons = reasons[:]

// reasons is Reasons as an array, so that its length is a constant:
// Metrics keeps one counter per reason in an array of that length, which a
// new reason here grows with it.
var reasons = [...]Reason{Valid, BotUA, EmptyUA, Headless, BadHints, Datacenter, UnknownSite, BadReferrer, Excluded,
	DuplicateID, Duplicate, Rate, NetworkRotation, HeaderMismatch, ForeignOrigin,
	EngagementOrphan, EngagementLate, EngagementRepeat, EngagementOverclaim}

// Verdict is an event with its judgement and its place in the stream, which
// is exactly one row of views_raw. Partition and Seq identify the JetStream
// message the event arrived in; Index is its position within that message.
type Verdict struct {
	Event
	Reason    Reason
	Partition uint16
	Seq       uint64
	Index     uint32
	Dims      Dims
	// Batch is the last stream sequence of the insert that stored the
	// verdict (rollup.Writer sets it): the rollup feed takes a partition's
	// rows by batch, because a held verdict is stored by a later batch
	// under its own, earlier sequence. 0 on rows stored before migration
	// 012, which the materialized views had already counted.
	Batch uint64
	// Rules is the version of the rule set that judged the verdict
	// (validate/judge.RuleSet); "" on rows stored before migration 014.
	Rules string
	// Visit is what the verdict changes of its site's visit and engagement
	// figures (VisitDelta); zero unless it is a counted view or an
	// accepted engagement.
	Visit VisitDelta
}

// Stream layout shared by every role. Changing Partitions on an existing
// stream remaps visitors to other validators, so it is fixed per deployment.
const (
	StreamName      = "VIEWS"
	SubjectPrefix   = "views.raw."
	SubjectWildcard = "views.raw.*"
	// DefaultPartitions is the partition count of a new stream on a NATS
	// cluster: four lets up to four validator processes share the load.
	DefaultPartitions = 4
	// EmbeddedPartitions is the partition count of a new stream on the
	// embedded NATS server, where one process validates every partition:
	// there, partitions only cost. Each splits group commits into more,
	// smaller messages, runs its own consumer and costs the store an insert
	// per flush. On the 2-core box one partition gave the highest pixel and
	// batch throughput (docs/benchmarks/history/round-3.md, "Partitions on
	// one machine"). One validator goroutine is enough for the rules
	// (BenchmarkValidate; docs/benchmarks/README.md, "Rules and the
	// validator").
	EmbeddedPartitions = 1

	BucketSites  = "VC_SITES"  // registered sites: key domain, value JSON
	BucketSalts  = "VC_SALTS"  // daily visitor-id salts: key YYYY-MM-DD
	BucketRollup = "VC_ROLLUP" // rollup batch intents: key p<partition>
	BucketLeases = "VC_LEASES" // validator partition ownership: key p<partition>
	BucketRules  = "VC_RULES"  // rule sets by version (validate/judge.RuleSet), and "active"
)

// Partition maps a visitor to a partition; every event of one visitor lands
// on the same validator, so duplicate and velocity state stays local.
//
// Only the low 32 bits count, and ingest fills those with the low 32 bits of
// the keyed hash of the visitor's widest network (NetworkKey): the network
// id itself for IPv4 (the /24), the /32's block id for IPv6 (Block). So
// every visitor of one network, and every /48 of one IPv6 /32, lands on the
// same validator too, and per-network rates and rotation are judged on all
// of the network's traffic, not a 1/N sample of it.
func Partition(visitor uint64, partitions int) int {
	return int(uint32(visitor) % uint32(partitions))
}

// NetworkKey gives a visitor id its network's partition key: the high 32
// bits stay the visitor's own hash, the low 32 come from key, the network
// id for IPv4 and the /32's block id for IPv6 (see Partition).
func NetworkKey(visitor, key uint64) uint64 {
	return visitor&^0xffffffff | key&0xffffffff
}

// Block returns the key of the IPv6 /32 the view came from, the partition
// key ingest put in the visitor id's low 32 bits (NetworkKey); ok is false
// for IPv4, where that key is the network id's own low 32 bits, for an
// unknown address (Network 0), and for IPv6 views published before the
// /32 was keyed (their key was the /48's too). A /32 is what one provider
// holds, typically handing each home or phone a /48 to /64 of it; its
// views are judged together, at a higher limit than a /48's (validate's
// rate rule), since one /48 per view would otherwise escape every network
// limit. Carried in the visitor id rather than a field of its own, so the
// stream format and views_raw did not change: a revalidation reading
// views_raw sees it too. Two /32s share a key with a chance of 2^-32.
func (e *Event) Block() (key uint64, ok bool) {
	if e.Network == 0 || uint32(e.Visitor) == uint32(e.Network) {
		return 0, false
	}
	return uint64(uint32(e.Visitor)), true
}

// Subject is the stream subject of a partition.
func Subject(partition int) string {
	return SubjectPrefix + strconv.Itoa(partition)
}

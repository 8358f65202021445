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
	Visitor   uint64    // hash(daily salt, site, IP, UA)
	Network   uint64    // hash(daily salt, IPv4 /24 or IPv6 /48)
	Webdriver bool      // the beacon reported navigator.webdriver
	Source    Source    // which endpoint received it
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
	UnknownSite Reason = "unknown_site" // the site is not registered
	DuplicateID Reason = "duplicate_id" // the same event id seen within 24 h (a client retry)
	Duplicate   Reason = "duplicate"    // the same visitor viewed the same page within the window
)

// Reasons lists every verdict, valid first; metrics and reports iterate it.
var Reasons = []Reason{Valid, BotUA, EmptyUA, Headless, UnknownSite, DuplicateID, Duplicate}

// Verdict is an event with its judgement and its place in the stream, which
// is exactly one row of views_raw. Partition and Seq identify the JetStream
// message the event arrived in; Index is its position within that message.
type Verdict struct {
	Event
	Reason    Reason
	Partition uint16
	Seq       uint64
	Index     uint32
}

// Stream layout shared by every role. Changing Partitions on an existing
// stream remaps visitors to other validators, so it is fixed per deployment.
const (
	StreamName        = "VIEWS"
	SubjectPrefix     = "views.raw."
	SubjectWildcard   = "views.raw.*"
	DefaultPartitions = 8

	BucketSites  = "VC_SITES"  // registered sites: key domain, value JSON
	BucketSalts  = "VC_SALTS"  // daily visitor-id salts: key YYYY-MM-DD
	BucketRollup = "VC_ROLLUP" // rollup batch intents: key p<partition>
)

// Partition maps a visitor to a partition; every event of one visitor lands
// on the same validator, so duplicate and velocity state stays local.
func Partition(visitor uint64, partitions int) int {
	return int(visitor % uint64(partitions))
}

// Subject is the stream subject of a partition.
func Subject(partition int) string {
	return SubjectPrefix + strconv.Itoa(partition)
}

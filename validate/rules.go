// Package validate judges every event in the stream: valid, or the reason it
// is rejected (a bot user agent, a headless browser, an unknown site, a client
// retry, a repeated view). The rules (Rules) are a pure function of the event
// sequence fed to them, clocked by the events' own receive times; the consumer
// loop feeds them one partition of the stream and hands the verdicts on.
//
// It must never drop an event (a rejection is a verdict, not a deletion), never
// read the wall clock or randomness inside the rules (a replay must rebuild the
// same state and so the same verdicts), and never hold unbounded state.
package validate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/viewcount/viewcount"
)

// Config holds the rules' knobs. A zero field takes its default, so Config{}
// is DefaultConfig(); negative values are errors.
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
	// ExtraBotPatterns are case-insensitive regular expressions (see
	// LoadPatterns) that mark a user agent as a bot, on top of the built-in
	// lists.
	ExtraBotPatterns []string
}

// DefaultConfig returns the defaults. MaxKeys is 1<<20 because a remembered
// key costs ~36 bytes (measured: Go map slot, control bytes, load factor), so
// a full window is ~36 MiB and a Rules ~72 MiB whatever the traffic: a hard
// ceiling an operator can plan for (×8 partitions in one process). 1M keys
// hold every view of a partition taking ~500 views/s for the 30-minute
// window. For ids they hold a full 24 hours only up to ~12 events/s per
// partition; beyond that the oldest ids are forgotten early, which matters
// only for retries arriving hours late, and those are rare (a retry usually
// follows within seconds).
func DefaultConfig() Config {
	return Config{
		DuplicateWindow: 30 * time.Minute,
		RetryWindow:     24 * time.Hour,
		MaxKeys:         1 << 20,
	}
}

func (c Config) withDefaults() (Config, error) {
	d := DefaultConfig()
	for _, w := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"DuplicateWindow", &c.DuplicateWindow, d.DuplicateWindow},
		{"RetryWindow", &c.RetryWindow, d.RetryWindow},
	} {
		switch {
		case *w.v == 0:
			*w.v = w.def
		case *w.v < time.Millisecond:
			// Event times have millisecond precision.
			return c, fmt.Errorf("validate: %s %v: must be at least 1ms", w.name, *w.v)
		}
	}
	switch {
	case c.MaxKeys == 0:
		c.MaxKeys = d.MaxKeys
	case c.MaxKeys < 0:
		return c, fmt.Errorf("validate: MaxKeys %d: must not be negative", c.MaxKeys)
	}
	return c, nil
}

// Rules is the chain of checks every event goes through, with the windowed
// state the duplicate checks need. It is not safe for concurrent use: each
// partition's consumer owns one, which is also what keeps its verdicts a
// function of that partition's stream order.
type Rules struct {
	cfg   Config
	sites SiteLookup
	ua    *uaMatcher
	ids   window // hash(site, id) → last seen
	views window // hash(visitor, site, page) → last seen
	now   int64  // latest event time seen, Unix ms: the rules' only clock
	buf   []byte // scratch for building hash keys
}

// NewRules returns rules configured by cfg that look sites up in sites. It
// fails on a negative or sub-millisecond window, a negative MaxKeys, a bad
// extra pattern or a nil sites.
func NewRules(cfg Config, sites SiteLookup) (*Rules, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if sites == nil {
		return nil, errors.New("validate: no site lookup")
	}
	ua, err := newUAMatcher(cfg.ExtraBotPatterns)
	if err != nil {
		return nil, err
	}
	return &Rules{
		cfg:   cfg,
		sites: sites,
		ua:    ua,
		ids:   newWindow(cfg.RetryWindow.Milliseconds(), cfg.MaxKeys),
		views: newWindow(cfg.DuplicateWindow.Milliseconds(), cfg.MaxKeys),
		now:   math.MinInt64,
	}, nil
}

// Judge returns the verdict for e and updates the windowed state. The checks
// run in this order and the first that fails decides:
//
//  1. EmptyUA: no user agent (or only spaces).
//  2. BotUA: a crawler, HTTP library, headless browser, AI crawler, monitor or
//     link previewer, by user agent.
//  3. Headless: the page reported navigator.webdriver.
//  4. UnknownSite: the site is not registered.
//  5. DuplicateID: the same (site, event id) was seen less than RetryWindow
//     ago; only for events with an id.
//  6. Duplicate: the same visitor viewed the same page of the same site less
//     than DuplicateWindow ago.
//
// The stateless checks come first, so events rejected by them never enter the
// windows: bots and junk for unregistered sites cannot fill the capped state
// and push out real visitors' keys. A DuplicateID is the same view delivered
// again, so it does not touch the view window.
//
// Both windows slide: every sighting that reaches a check refreshes its key
// (a retry of a retry is still a retry; a visitor who reloads a page every ten
// minutes for an hour makes one view, the way a 30-minute-inactivity visit
// works in Plausible or Google Analytics). This is deliberate: with a window
// measured only from the last counted view, whether a view counts would hinge
// on a chain of earlier verdicts reaching back indefinitely, and a replay
// starting anywhere but the very first event could count differently. With
// sliding windows a verdict depends only on the events of the last
// ReplayWindow, which is what makes a bounded replay exact.
//
// "Less than the window ago" is measured from the latest event time seen so
// far, not from e.Time, so an event arriving out of order is never judged
// against state that has already expired. Exactly one window later counts.
func (r *Rules) Judge(e *viewcount.Event) viewcount.Reason {
	t := e.Time.UnixMilli()
	if t > r.now {
		r.now = t
		r.ids.expire(t)
		r.views.expire(t)
	}
	if strings.TrimSpace(e.UA) == "" {
		return viewcount.EmptyUA
	}
	if r.ua.isBot(e.UA) {
		return viewcount.BotUA
	}
	if e.Webdriver {
		return viewcount.Headless
	}
	if !r.sites.Known(e.Site) {
		return viewcount.UnknownSite
	}
	if e.ID != "" && r.ids.seen(r.idKey(e), t, r.now) {
		return viewcount.DuplicateID
	}
	if r.views.seen(r.viewKey(e), t, r.now) {
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

func (r *Rules) viewKey(e *viewcount.Event) uint64 {
	b := binary.LittleEndian.AppendUint64(r.buf[:0], e.Visitor)
	b = append(b, e.Site...)
	b = append(b, 0)
	b = append(b, e.Page...)
	r.buf = b
	return xxhash.Sum64(b)
}

// Reset forgets all windowed state and the clock, as before a replay. The
// memoized user-agent verdicts are kept: they are not state, only speed.
func (r *Rules) Reset() {
	r.ids.reset()
	r.views.reset()
	r.now = math.MinInt64
}

// ReplayWindow is how far back a verdict can depend on earlier events: a
// Duplicate depends on the views of the last DuplicateWindow, and whether
// each of those entered the view window depends on the ids of the RetryWindow
// before it. Replaying at least this much of a partition (plus any gap
// between receive and stream time) into fresh Rules rebuilds state that gives
// the same verdicts as an uninterrupted run, as long as MaxKeys was not
// reached in that stretch.
func (r *Rules) ReplayWindow() time.Duration {
	return r.cfg.RetryWindow + r.cfg.DuplicateWindow
}

// Remembered returns how many keys each window holds, for a gauge. Neither
// exceeds MaxKeys.
func (r *Rules) Remembered() (ids, views int) {
	return r.ids.n, r.views.n
}

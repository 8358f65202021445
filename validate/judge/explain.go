package judge

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/viewcount/viewcount"
)

// The decisions a rule makes on one view, in an Explanation.
const (
	Rejects = "rejects"
	Passes  = "passes"
	// Allowed: the rule rejects the view, and an operator's allow
	// correction passes over it.
	Allowed = "allowed"
	// Stateful: the rule decides by the views before this one (retries,
	// rates, rotation, reloads), which one view alone cannot tell; a stored
	// event's verdict and history say what it decided.
	Stateful = "depends on earlier views"
	// Unreached: an earlier rule rejected the view, and this one judges
	// only views the earlier rules passed.
	Unreached = "not reached"
)

// Step is one rule's decision on one view, with what it saw.
type Step struct {
	// Rule is named by the reason it gives.
	Rule     viewcount.Reason `json:"rule"`
	Decision string           `json:"decision"`
	Evidence string           `json:"evidence"`
}

// UAFacts is what the rules read from a user agent.
type UAFacts struct {
	Browser string `json:"browser"`
	OS      string `json:"os"`
	Device  string `json:"device"`
	// Evidence: positive evidence (bot), a weak signal (weak), or a
	// browser, and what says so.
	Evidence string `json:"evidence"`
	Bot      bool   `json:"bot"`
	Weak     bool   `json:"weak"`
}

// Explanation is every rule's decision on one view, in the order they
// run.
type Explanation struct {
	// Verdict is the first rule that rejects the view, Valid when none of
	// the rules that judge a view alone does (the stateful rules after them
	// may still: Steps say which they are).
	Verdict   viewcount.Reason `json:"verdict"`
	UserAgent UAFacts          `json:"user_agent"`
	Steps     []Step           `json:"steps"`
	// Rules is the version of the rule set that explains it.
	Rules string `json:"rules"`
}

// Explain judges e with every rule and says what each decided and why.
// Unlike Judge it touches no state: the stateful rules are reported as
// such, with their limits; their evidence lies in the views before e. It
// is for an operator asking "why was this rejected?", not for the hot
// path: it classifies the user agent afresh, evidence and all.
func (r *Rules) Explain(e *viewcount.Event) Explanation {
	x := Explanation{Verdict: viewcount.Valid, Rules: r.cfg.RuleSet().Version}
	t := e.Time.UnixMilli()
	var ua uaInfo
	empty := strings.TrimSpace(e.UA) == ""
	if !empty {
		ua = r.ua.info(e.UA)
		var buf [512]byte
		var why string
		r.ua.classifyLow(e.UA, appendLower(buf[:0], e.UA), &why)
		x.UserAgent = UAFacts{Browser: ua.dims.browser, OS: ua.dims.os, Device: ua.dims.device, Evidence: why, Bot: ua.bot, Weak: ua.weak}
	}
	decided := false
	// step records one rule's decision: problem is what it found ("" for
	// nothing), ok what it saw instead.
	step := func(rule viewcount.Reason, problem, ok string) {
		s := Step{Rule: rule, Decision: Passes, Evidence: ok}
		switch {
		case problem == "":
		case decided:
			s.Decision, s.Evidence = Unreached, "it would reject: "+problem
		default:
			s.Decision, s.Evidence = Rejects, problem
			if id := r.allowed.match(e, ua.dims.browser, rule, t); id != "" {
				s.Decision, s.Evidence = Allowed, problem+"; allowed by correction "+id
			} else {
				decided, x.Verdict = true, rule
			}
		}
		x.Steps = append(x.Steps, s)
	}

	if empty {
		step(viewcount.EmptyUA, "no user agent", "")
	} else {
		step(viewcount.EmptyUA, "", fmt.Sprintf("a user agent of %d bytes", len(e.UA)))
	}
	if ua.bot {
		step(viewcount.BotUA, x.UserAgent.Evidence, "")
	} else {
		step(viewcount.BotUA, "", x.UserAgent.Evidence)
	}

	headless := ""
	switch {
	case e.Webdriver:
		headless = "the page reported navigator.webdriver"
	case e.Source == viewcount.SourceBeacon:
		headless = screenProblem(e, ua)
	}
	step(viewcount.Headless, headless, orDefault(e.Source == viewcount.SourcePixel,
		"no navigator.webdriver; a pixel reports no screen", "no navigator.webdriver, a screen a person can look at"))

	hints := ""
	if e.Source == viewcount.SourceBeacon {
		hints = hintsProblem(e, ua, r.hints)
	}
	step(viewcount.BadHints, hints, orDefault(e.Source == viewcount.SourcePixel,
		"a pixel carries no hints", fmt.Sprintf("hints fit the browser (screen %d × %d, %d languages)", e.Hints.ScreenW, e.Hints.ScreenH, e.Hints.Languages)))

	headers, seen := "", describeHeaders(e.Headers)
	switch {
	case r.cfg.IgnoreHeaders:
		seen = "not judged (--ignore-headers)"
	case !e.Headers.Has(viewcount.HeadersSeen):
		seen = "no request headers recorded for this event"
	default:
		headers = headerProblem(e, ua)
		if headers != "" {
			headers += " (the request: " + seen + ")"
		} else if ua.family == famOther && !ua.weak && !ua.bot {
			seen = "not judged for this browser (web views, in-app and iOS non-Safari browsers send headers of their own): " + seen
		}
	}
	step(viewcount.HeaderMismatch, headers, seen)

	dc, asn := "", "no AS number known for the address"
	if e.ASN != 0 {
		asn = fmt.Sprintf("AS%d, not a hosting network", e.ASN)
	}
	switch {
	case e.Datacenter:
		dc = "the client address is in --datacenter-ranges"
	case r.hosting.has(e.ASN):
		dc = fmt.Sprintf("AS%d is a hosting network (%s)", e.ASN, hostingName(e.ASN))
	}
	step(viewcount.Datacenter, dc, asn)

	site := ""
	if !viewcount.InRegistration(r.sites, e.Site, e.Time) {
		site = fmt.Sprintf("%q is not a registered site, or was not at %s", e.Site, e.Time.UTC().Format(time.RFC3339Nano))
	}
	step(viewcount.UnknownSite, site, fmt.Sprintf("%q is registered", e.Site))

	origin, from := "", "the request named no page host (no Origin, Referer or tracker report): no evidence either way"
	switch {
	case e.Origin != "" && foreignOrigin(e, r.hosts):
		origin = fmt.Sprintf("the page's host %q is not among the site's hostnames at %s", e.Origin, e.Time.UTC().Format(time.RFC3339))
	case e.Origin != "" && r.hosts == nil:
		from = fmt.Sprintf("the page's host %q; no hostnames to judge it by", e.Origin)
	case e.Origin != "":
		from = fmt.Sprintf("the page's host %q is among the site's hostnames", e.Origin)
	}
	step(viewcount.ForeignOrigin, origin, from)

	spam, ref := "", "no referrer"
	if e.Referrer != "" {
		ref = fmt.Sprintf("the referrer's host %q is not on the spam list", hostOf(e.Referrer))
	}
	if h := r.spam.match(e.Referrer); h != "" {
		spam = fmt.Sprintf("the referrer's host is on the spam list (as %q)", h)
	}
	step(viewcount.BadReferrer, spam, ref)

	excluded := ""
	if id := r.excluded.match(e, t); id != "" {
		excluded = "an operator's correction excludes it: " + id
	}
	step(viewcount.Excluded, excluded, "no exclusion in force for it")

	c := r.cfg
	for _, s := range []struct {
		rule viewcount.Reason
		says string
	}{
		{viewcount.DuplicateID, fmt.Sprintf("rejects an event whose (site, id) came less than %s before", c.RetryWindow)},
		{viewcount.Rate, fmt.Sprintf("rejects past %d views a visitor, %d a network (/24, /48) or %d of one page an IPv6 /32 within %s",
			c.VisitorRateLimit, c.NetworkRateLimit, c.BlockRateLimit, c.RateWindow)},
		{viewcount.NetworkRotation, fmt.Sprintf("rejects a network's views past %d distinct user agents within %s", c.RotationMaxUAs, c.RotationWindow)},
		{viewcount.Duplicate, fmt.Sprintf("rejects the same visitor's view of the same page within %s", c.DuplicateWindow)},
	} {
		d := Stateful
		if decided {
			d = Unreached
		}
		x.Steps = append(x.Steps, Step{Rule: s.rule, Decision: d, Evidence: s.says})
	}
	return x
}

func orDefault(cond bool, a, b string) string {
	if cond {
		return a
	}
	return b
}

// describeHeaders names the request facts ingest recorded (HeaderFlags).
func describeHeaders(f viewcount.HeaderFlags) string {
	var on []string
	for _, h := range []struct {
		flag viewcount.HeaderFlags
		name string
	}{
		{viewcount.HeaderAcceptLanguage, "Accept-Language"},
		{viewcount.HeaderAccept, "a fitting Accept"},
		{viewcount.HeaderFetchMeta, "Sec-Fetch-*"},
		{viewcount.HeaderFetchFits, "fitting Sec-Fetch-*"},
		{viewcount.HeaderClientHints, "Sec-CH-UA"},
		{viewcount.HeaderHintsAgree, "Sec-CH-UA agreeing with the user agent"},
		{viewcount.HeaderHeadlessBrand, "a Headless brand"},
		{viewcount.HeaderSecure, "secure"},
	} {
		if f.Has(h.flag) {
			on = append(on, h.name)
		}
	}
	if len(on) == 0 {
		return "none of the headers browsers send"
	}
	return strings.Join(on, ", ")
}

// hostingName is the hosting list's comment for asn: who runs it.
func hostingName(asn uint32) string {
	want := strconv.FormatUint(uint64(asn), 10)
	sc := bufio.NewScanner(strings.NewReader(defaultHostingASNs))
	for sc.Scan() {
		num, name, ok := strings.Cut(sc.Text(), "#")
		if ok && strings.TrimSpace(num) == want {
			return "lists/hosting-asns.txt: " + strings.TrimSpace(name)
		}
	}
	return "the operator's extra hosting AS numbers"
}

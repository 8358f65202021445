package uaeval

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/validate/judge"
)

// Judge is what an evaluation needs of the rules; *judge.Rules is one.
type Judge interface {
	Judge(e *viewcount.Event) viewcount.Reason
}

// Site is the site every evaluated view is for; NewRules registers it.
const Site = "uaeval.example"

// maxUALen is ingest.MaxUALen: the rules only ever see user agents cut to
// it, so the evaluation cuts them the same way (a test keeps the two equal).
const maxUALen = 512

type oneSite struct{}

// Registered: Site, registered since before any view.
func (oneSite) Registered(site string) (time.Time, bool) { return time.Time{}, site == Site }

// NewRules returns the validator's rules configured by cfg (the built-in
// lists plus cfg.ExtraBotPatterns, or only those with ReplaceBotList), with
// Site registered.
func NewRules(cfg judge.Config) (*judge.Rules, error) {
	r, err := judge.NewRules(cfg, oneSite{})
	if err != nil {
		return nil, fmt.Errorf("uaeval: %w", err)
	}
	return r, nil
}

// Tally is what an evaluation counts, for a whole set and per group.
type Tally struct {
	UAs            int     // samples judged
	Rejected       int     // samples the rules rejected
	Weight         float64 // the samples' total weight
	RejectedWeight float64 // the rejected samples' weight
}

// Rate is the rejected share of the weight: the recall for a set of bots,
// the traffic-weighted false-positive rate for a set of people. 0 for an
// empty set.
func (t Tally) Rate() float64 { return share(t.RejectedWeight, t.Weight) }

func (t *Tally) add(w float64, rejected bool) {
	t.UAs++
	t.Weight += w
	if rejected {
		t.Rejected++
		t.RejectedWeight += w
	}
}

// Result is one data set's evaluation. Its Tally is the views as their
// kind sends them (a person's with a browser's request, a bot's with an
// HTTP client's: Request); Alone is the same user agents with no request
// examined, what the user agent alone decides.
type Result struct {
	Set Set
	Tally
	Alone Tally
	// Reasons counts the rejected samples by reason.
	Reasons map[viewcount.Reason]int
	// Groups are the same numbers per tag (bots) or device category
	// (humans), sorted by name; a sample with several tags is in each.
	Groups []Group
	// Classes are the same numbers per device class (Class), sorted by
	// name.
	Classes []Group
	// Misses are the first distinct user agents the rules got wrong, in
	// file order: bots counted as views, or people rejected.
	Misses []Miss
}

// Group is a Result's numbers for one tag or device category.
type Group struct {
	Name string
	Tally
}

func share(part, whole float64) float64 {
	if whole == 0 {
		return 0
	}
	return part / whole
}

// Miss is a user agent the rules got wrong (as ingest would pass it on:
// trimmed and capped), with the verdict they gave it.
type Miss struct {
	UA     string
	Reason viewcount.Reason
	Groups []string
}

// Request is what an evaluated view's request carries (the flags ingest
// sets from its headers): a person's browser sends a browser's request
// for the pixel over HTTPS (Accept-Language, an image Accept, Fetch
// Metadata that fits); a bot's HTTP client a script's (none of those).
// A bot that sends a browser's request is caught by the checks of the
// request and the rates, not by its user agent: Alone measures that.
func Request(k Kind) viewcount.HeaderFlags {
	if k == Humans {
		return viewcount.HeadersSeen | viewcount.HeaderAcceptLanguage | viewcount.HeaderAccept |
			viewcount.HeaderFetchMeta | viewcount.HeaderFetchFits | viewcount.HeaderSecure
	}
	return viewcount.HeadersSeen | viewcount.HeaderSecure
}

// Evaluate judges every sample of each set in dir with j and returns one
// Result per set, keeping up to misses wrong user agents each. Each sample
// is a pixel view of Site by a visitor and network of its own, so only the
// checks that look at the user agent and the request can reject it; it is
// judged twice, with the request its kind sends (Request) and with none. A
// set whose file is missing fails with ErrMissing.
func Evaluate(j Judge, dir string, sets []Set, misses int) ([]Result, error) {
	out := make([]Result, 0, len(sets))
	var n uint64
	for _, set := range sets {
		res := Result{Set: set, Reasons: map[viewcount.Reason]int{}}
		groups, classes := map[string]*Group{}, map[string]*Group{}
		err := readFile(dir, set, func(s Sample) {
			n++
			ua := normaliseUA(s.UA)
			e := viewcount.Event{
				Time:    evalTime,
				Site:    Site,
				Page:    "/",
				UA:      ua,
				Visitor: n,
				Network: n,
				Source:  viewcount.SourcePixel,
			}
			alone := e
			res.Alone.add(s.Weight, j.Judge(&alone) != viewcount.Valid)
			n++
			e.Visitor, e.Network, e.Headers = n, n, Request(set.Kind)
			reason := j.Judge(&e)
			rejected := reason != viewcount.Valid
			res.add(s.Weight, rejected)
			if rejected {
				res.Reasons[reason]++
			}
			for _, name := range s.Groups {
				g := groups[name]
				if g == nil {
					g = &Group{Name: name}
					groups[name] = g
				}
				g.add(s.Weight, rejected)
			}
			class := Class(ua)
			if classes[class] == nil {
				classes[class] = &Group{Name: class}
			}
			classes[class].add(s.Weight, rejected)
			if rejected == (set.Kind == Humans) && len(res.Misses) < misses &&
				!slices.ContainsFunc(res.Misses, func(m Miss) bool { return m.UA == ua }) {
				res.Misses = append(res.Misses, Miss{UA: ua, Reason: reason, Groups: s.Groups})
			}
		})
		if err != nil {
			return out, err
		}
		for _, g := range groups {
			res.Groups = append(res.Groups, *g)
		}
		for _, g := range classes {
			res.Classes = append(res.Classes, *g)
		}
		byName := func(a, b Group) int { return strings.Compare(a.Name, b.Name) }
		slices.SortFunc(res.Groups, byName)
		slices.SortFunc(res.Classes, byName)
		out = append(out, res)
	}
	return out, nil
}

// evalTime is every evaluated view's time: no check that decides on the
// user agent looks at it, and a fixed one keeps runs identical.
var evalTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// normaliseUA does to a user agent what ingest does before the rules see
// it: trim, cut to maxUALen bytes on a character boundary, drop invalid
// UTF-8.
func normaliseUA(ua string) string {
	ua = strings.TrimSpace(ua)
	if len(ua) > maxUALen {
		n := maxUALen
		for n > 0 && !utf8.RuneStart(ua[n]) {
			n--
		}
		ua = ua[:n]
	}
	return strings.ToValidUTF8(ua, "")
}

// maxGroupRows: a set with more groups than this (uap-core's devices,
// grouped by brand) is shown by device class only.
const maxGroupRows = 40

// Print writes the results as a table (one row per set, then one per
// group), a table of the people's sets by device class, and each set's
// misses. REJECTED and RATE are the views as their kind sends them
// (Request); ALONE is the rate with no request examined.
func Print(w io.Writer, results []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SOURCE\tKIND\tUAS\tREJECTED\tMEASURE\tRATE\tALONE\tREJECTED BY")
	for _, r := range results {
		measure, format := "recall", "%.2f %%"
		if r.Set.Kind == Humans {
			measure, format = "false positives (per UA)", "%.3f %%"
			if r.Set.Weighted() {
				measure = "false positives (traffic-weighted)"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t"+format+"\t"+format+"\t%s\n",
			r.Set.Name, r.Set.Kind, r.UAs, r.Rejected, measure, 100*r.Rate(), 100*r.Alone.Rate(), reasons(r.Reasons))
		if len(r.Groups) > maxGroupRows {
			fmt.Fprintf(tw, "  (%d groups: see the device classes below)\t\t\t\t\t\n", len(r.Groups))
			continue
		}
		for _, g := range r.Groups {
			fmt.Fprintf(tw, "  %s\t\t%d\t%d\t\t"+format+"\n", g.Name, g.UAs, g.Rejected, 100*g.Rate())
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("uaeval: %w", err)
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DEVICE CLASS\tSOURCE\tUAS\tREJECTED\tRATE")
	type row struct {
		class, source string
		g             Group
		weighted      bool
	}
	var rows []row
	for _, r := range results {
		if r.Set.Kind != Humans {
			continue
		}
		for _, g := range r.Classes {
			rows = append(rows, row{g.Name, r.Set.Name, g, r.Set.Weighted()})
		}
	}
	slices.SortStableFunc(rows, func(a, b row) int { return strings.Compare(a.class, b.class) })
	for _, x := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.3f %%\n", x.class, x.source, x.g.UAs, x.g.Rejected, 100*x.g.Rate())
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("uaeval: %w", err)
	}
	for _, r := range results {
		what := "bot user agents counted as views"
		if r.Set.Kind == Humans {
			what = "human user agents rejected"
		}
		wrong := r.Rejected
		if r.Set.Kind == Bots {
			wrong = r.UAs - r.Rejected
		}
		if wrong == 0 {
			fmt.Fprintf(w, "\n%s: no %s\n", r.Set.Name, what)
			continue
		}
		if len(r.Misses) == 0 {
			continue // --misses 0: the counts above are the answer
		}
		fmt.Fprintf(w, "\n%s: %s (the first %d):\n", r.Set.Name, what, len(r.Misses))
		for _, m := range r.Misses {
			label := strings.Join(m.Groups, ",")
			if r.Set.Kind == Humans {
				label = string(m.Reason)
			}
			fmt.Fprintf(w, "  [%s] %s\n", label, m.UA)
		}
	}
	return nil
}

// reasons formats counts by reason, largest first ("bot_ua 1900, empty_ua 3").
func reasons(m map[viewcount.Reason]int) string {
	keys := make([]viewcount.Reason, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b viewcount.Reason) int {
		if m[a] != m[b] {
			return m[b] - m[a]
		}
		return strings.Compare(string(a), string(b))
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

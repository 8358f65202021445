package stats

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/viewcount/viewcount/sql/store"
)

// Filters narrow the summary, the timeseries and the breakdowns to the
// views whose dimensions pass them (docs/stats-api.md, "Filters"). The
// syntax is one filter per `filter` parameter, all of them combined with
// AND:
//
//	filter=<dimension><operator><value>[|<value>…]
//
// with the operators == (is one of), != (is none of), ~ (contains one of,
// case-insensitive) and !~ (contains none of). "|" separates values; "\|"
// and "\\" are a literal bar and backslash in a value.
//
// Where a filtered answer is read from:
//   - every filter on one dimension: that dimension's rollup rows
//     (dim_rollup, engagement_rollup) whose value passes, since each view
//     has exactly one value of a dimension: the summary (engagement too),
//     hour and day timeseries of every metric, and the breakdown by that
//     dimension;
//   - anything else (filters on two or more dimensions, a breakdown by
//     another dimension, minute buckets): page_views, each valid view with
//     every dimension, scanned over the range with the filters as
//     constants; views and uniques only, and only as far back as
//     page_views keeps (--raw-retention).
//
// Rejected events keep no dimension but their page, so a filtered
// summary's filtered counts are null (not counted) rather than the site's.

// filterOp is a filter's operator.
type filterOp uint8

const (
	opIs filterOp = iota
	opIsNot
	opContains
	opNotContains
)

// The operators in the order they are looked for: a two-character one
// before its one-character prefix.
var filterOps = []struct {
	text string
	op   filterOp
}{{"==", opIs}, {"!=", opIsNot}, {"!~", opNotContains}, {"~", opContains}}

const (
	maxFilters      = 10
	maxFilterValues = 20
	maxFilterValue  = 2048
	opNames         = "==, !=, ~ or !~"
)

// filterDims are the dimensions a filter may name, and their columns in
// page_views.
var filterDims = map[string]string{
	"page": "page", "source": "ref_source", "referrer": "ref_host",
	"utm_source": "utm_source", "utm_medium": "utm_medium", "utm_campaign": "utm_campaign",
	"browser": "browser", "os": "os", "device": "device", "country": "country", "screen": "screen",
	"channel": "channel",
}

// channel is the one dimension no rollup keeps: computed per view from
// page_views (queries/stats_filter_views_channel.sql), it is always read
// from there.
const channel = "channel"

const filterDimNames = "page, source, channel, referrer, utm_source, utm_medium, utm_campaign, browser, os, device, country, screen"

// filter is one parsed filter; values are as stored (an "(unknown)" or
// "(direct)" of an is / is-not filter is the empty string, a page is
// normalised as ingest does).
type filter struct {
	dim    string
	op     filterOp
	values []string
	text   string // as given, for answers and errors
}

// parseFilters reads the request's filter parameters.
func parseFilters(raw []string, normPage func(string) (string, error)) ([]filter, error) {
	if len(raw) > maxFilters {
		return nil, badParam("filter", "%d filters: at most %d", len(raw), maxFilters)
	}
	out := make([]filter, 0, len(raw))
	contains := map[string]bool{}
	for _, r := range raw {
		f, err := parseFilter(r, normPage)
		if err != nil {
			return nil, err
		}
		if f.op == opContains {
			// Several "contains" of one dimension would be an AND of ORs,
			// which the store's one slot per dimension does not hold.
			if contains[f.dim] {
				return nil, badParam("filter", "%q: a second ~ filter on %s: put its values in one (%s~a|b)", r, f.dim, f.dim)
			}
			contains[f.dim] = true
		}
		out = append(out, f)
	}
	return out, nil
}

func parseFilter(r string, normPage func(string) (string, error)) (filter, error) {
	quoted := r
	if len(quoted) > 80 {
		quoted = quoted[:80] + "…"
	}
	bad := func(format string, args ...any) error {
		return badParam("filter", "%q: %s", quoted, fmt.Sprintf(format, args...))
	}
	n := 0
	for n < len(r) && (r[n] >= 'a' && r[n] <= 'z' || r[n] == '_') {
		n++
	}
	dim, rest := r[:n], r[n:]
	if dim == "" {
		return filter{}, bad("no dimension: want <dimension><operator><value>, e.g. country==DE")
	}
	if _, ok := filterDims[dim]; !ok {
		if dim == "entry_page" || dim == "exit_page" {
			return filter{}, bad("%s is a visit's, not a view's: filters apply to views; filter by page", dim)
		}
		return filter{}, bad("unknown dimension %q: want one of %s", dim, filterDimNames)
	}
	f := filter{dim: dim, text: r}
	found := false
	for _, o := range filterOps {
		if strings.HasPrefix(rest, o.text) {
			f.op, rest, found = o.op, rest[len(o.text):], true
			break
		}
	}
	if !found {
		return filter{}, bad("no operator after %s: want %s", dim, opNames)
	}
	values, err := splitValues(rest)
	if err != nil {
		return filter{}, bad("%v", err)
	}
	if len(values) > maxFilterValues {
		return filter{}, bad("%d values: at most %d", len(values), maxFilterValues)
	}
	for i, v := range values {
		switch {
		case v == "":
			return filter{}, bad("value %d is empty", i+1)
		case len(v) > maxFilterValue:
			return filter{}, bad("value %d is longer than %d bytes", i+1, maxFilterValue)
		case !validText(v):
			return filter{}, bad("value %d is not UTF-8 text", i+1)
		}
		if f.op == opContains || f.op == opNotContains {
			continue
		}
		if v == emptyValue(dim) {
			values[i] = ""
			continue
		}
		if dim == "page" {
			p, err := normPage(v)
			if err != nil {
				return filter{}, bad("value %d: %v", i+1, err)
			}
			values[i] = p
		}
	}
	f.values = values
	return f, nil
}

// splitValues cuts a filter's values at unescaped bars.
func splitValues(s string) ([]string, error) {
	var (
		out []string
		cur strings.Builder
	)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			if i+1 == len(s) || (s[i+1] != '|' && s[i+1] != '\\') {
				return nil, fmt.Errorf(`a backslash must be followed by | or \ (at byte %d)`, i+1)
			}
			i++
			cur.WriteByte(s[i])
		case '|':
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(out, cur.String()), nil
}

// validText is UTF-8 without control characters (a stored dimension has
// none, so such a value could only be a mistake), as the badge's label.
func validText(s string) bool {
	return utf8.ValidString(s) && strings.IndexFunc(s, unicode.IsControl) < 0
}

// slot is what the store's filter parameters of one dimension say (the
// f_ parameters of queries/stats_filter_total.sql): every filter on that
// dimension folded into one test.
type slot struct {
	on, inOn    bool
	in, out     []string
	has, hasNot []string
}

// slots folds filters into one slot per dimension: is-lists intersect
// (a value must be in each), is-not lists and does-not-contain lists
// unite.
func slots(fs []filter) map[string]*slot {
	out := map[string]*slot{}
	for _, f := range fs {
		s := out[f.dim]
		if s == nil {
			s = &slot{}
			out[f.dim] = s
		}
		s.on = true
		switch f.op {
		case opIs:
			if !s.inOn {
				s.inOn, s.in = true, uniq(f.values)
			} else {
				s.in = slices.DeleteFunc(s.in, func(v string) bool { return !slices.Contains(f.values, v) })
			}
		case opIsNot:
			s.out = uniq(append(s.out, f.values...))
		case opContains:
			s.has = uniq(f.values)
		case opNotContains:
			s.hasNot = uniq(append(s.hasNot, f.values...))
		}
	}
	return out
}

func uniq(vs []string) []string {
	out := slices.Clone(vs)
	slices.Sort(out)
	return slices.Compact(out)
}

// bind sets the slot's parameters under prefix (f for dim_rollup's value,
// a dimension's name for page_views); a nil slot passes everything.
func (s *slot) bind(p store.Params, prefix string) {
	if s == nil {
		s = &slot{}
	}
	p[prefix+"_on"] = strconv.FormatBool(s.on)
	p[prefix+"_inon"] = strconv.FormatBool(s.inOn)
	p[prefix+"_in"] = store.ArrayParam(s.in)
	p[prefix+"_out"] = store.ArrayParam(s.out)
	p[prefix+"_has"] = store.ArrayParam(s.has)
	p[prefix+"_hasnt"] = store.ArrayParam(s.hasNot)
}

// oneDim is the dimension every filter names, "" when they name several
// or the channel (which no rollup keeps).
func oneDim(fs []filter) string {
	if len(fs) == 0 || fs[0].dim == channel {
		return ""
	}
	for _, f := range fs[1:] {
		if f.dim != fs[0].dim {
			return ""
		}
	}
	return fs[0].dim
}

// filterTexts are the filters as given, for an answer's meta.
func filterTexts(fs []filter) []string {
	if len(fs) == 0 {
		return nil
	}
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.text
	}
	return out
}

// escapeValue writes v as a filter value.
func escapeValue(v string) string {
	return strings.NewReplacer(`\`, `\\`, "|", `\|`).Replace(v)
}

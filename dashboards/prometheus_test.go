package dashboards

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/latency"
)

// promRefs is what a PromQL expression reads: the metric names it selects,
// the label names it matches on each, and the label names it groups or
// joins by.
type promRefs struct {
	metrics map[string][]string // metric → labels in its {…} matchers
	groupBy []string            // labels of by/without/on/ignoring/group_*
}

var (
	// PromQL words that are not metric names when not followed by "(".
	promKeywords = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true,
		"group_left": true, "group_right": true, "bool": true, "offset": true, "and": true,
		"or": true, "unless": true, "atan2": true, "inf": true, "nan": true}
	// Aggregations may put their by/without clause before the "(".
	promAggregations = map[string]bool{"sum": true, "min": true, "max": true, "avg": true,
		"group": true, "stddev": true, "stdvar": true, "count": true, "count_values": true,
		"bottomk": true, "topk": true, "quantile": true, "limitk": true, "limit_ratio": true}
	promLabelClause = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true,
		"group_left": true, "group_right": true}

	// Grafana's variables a Prometheus query may use; their values do not
	// matter here, only that they are known.
	promVarRE       = regexp.MustCompile(`\$\{(\w+)(?::\w+)?\}|\$(\w+)`)
	promBuiltins    = map[string]bool{"__rate_interval": true, "__interval": true, "__range": true, "__interval_ms": true, "__range_s": true}
	matcherRE       = regexp.MustCompile(`(\w+)\s*(?:=~|!~|!=|=)`)
	labelValuesRE   = regexp.MustCompile(`^\s*label_values\((?:(.*),)?\s*(\w+)\s*\)\s*$`)
	identStart      = func(c byte) bool { return c == '_' || c == ':' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
	identChar       = func(c byte) bool { return identStart(c) || '0' <= c && c <= '9' }
	errPromSelector = errors.New("a selector without a metric name ({…} alone) is not checked by these tests: name the metric")
)

// parsePromQL finds the metrics and labels expr refers to. It is a
// tokenizer, not a PromQL parser: it knows strings, ranges, numbers,
// function calls, aggregations and label clauses, which is all it needs to
// tell metric names from the rest. vars are the dashboard's variables.
func parsePromQL(expr string, vars map[string]bool) (promRefs, error) {
	refs := promRefs{metrics: map[string][]string{}}
	var err error
	expr = promVarRE.ReplaceAllStringFunc(expr, func(ref string) string {
		m := promVarRE.FindStringSubmatch(ref)
		name := m[1] + m[2]
		if !promBuiltins[name] && !vars[name] {
			err = fmt.Errorf("unknown variable or macro %s", ref)
		}
		return "1m" // stands in for a duration or a label value alike
	})
	if err != nil {
		return refs, err
	}
	if m := labelValuesRE.FindStringSubmatch(expr); m != nil { // Grafana's variable query
		inner, err := parsePromQL(m[1], vars)
		if err != nil {
			return refs, err
		}
		inner.groupBy = append(inner.groupBy, m[2])
		return inner, nil
	}
	next := func(i int) byte { // the next non-blank byte at or after i
		for ; i < len(expr); i++ {
			if c := expr[i]; c != ' ' && c != '\t' && c != '\n' {
				return c
			}
		}
		return 0
	}
	closing := func(i int, open, close byte) (int, error) { // index of close matching expr[i] == open
		j := strings.IndexByte(expr[i:], close)
		if j < 0 {
			return 0, fmt.Errorf("unterminated %c", open)
		}
		return i + j, nil
	}
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			j, err := closing(i+1, c, c)
			if err != nil {
				return refs, err
			}
			i = j + 1
		case c == '[': // a range or subquery: durations only
			j, err := closing(i, '[', ']')
			if err != nil {
				return refs, err
			}
			i = j + 1
		case c == '{':
			return refs, errPromSelector
		case '0' <= c && c <= '9' || c == '.':
			for i < len(expr) && (identChar(expr[i]) || expr[i] == '.') {
				i++
			}
		case identStart(c):
			j := i
			for j < len(expr) && identChar(expr[j]) {
				j++
			}
			word, after := expr[i:j], next(j)
			i = j
			switch {
			case promLabelClause[word]:
				if after == '(' {
					open := strings.IndexByte(expr[i:], '(') + i
					end, err := closing(open, '(', ')')
					if err != nil {
						return refs, err
					}
					for _, l := range strings.Split(expr[open+1:end], ",") {
						if l = strings.TrimSpace(l); l != "" {
							refs.groupBy = append(refs.groupBy, l)
						}
					}
					i = end + 1
				}
			case promKeywords[word], promAggregations[word], after == '(':
				// a keyword, an aggregation or a function: not a metric
			default:
				labels := []string{}
				if after == '{' {
					open := strings.IndexByte(expr[i:], '{') + i
					end, err := closing(open, '{', '}')
					if err != nil {
						return refs, err
					}
					for _, m := range matcherRE.FindAllStringSubmatch(expr[open+1:end], -1) {
						labels = append(labels, m[1])
					}
					i = end + 1
				}
				refs.metrics[word] = append(refs.metrics[word], labels...)
			}
		default:
			i++
		}
	}
	return refs, nil
}

// exposition maps each metric name in Prometheus text to its label names.
// Only sample lines count: a HELP or TYPE line alone is not a series.
func exposition(text string) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	labelRE := regexp.MustCompile(`(\w+)="`)
	for _, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, rest, _ := strings.Cut(line, " ")
		name, labels, _ := strings.Cut(name, "{")
		if out[name] == nil {
			out[name] = map[string]bool{}
		}
		for _, m := range labelRE.FindAllStringSubmatch(labels+rest, -1) {
			out[name][m[1]] = true
		}
	}
	return out
}

// familyTypes maps each family in Prometheus text to its TYPE.
func familyTypes(text string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, typ, _ := strings.Cut(rest, " ")
			out[name] = typ
		}
	}
	return out
}

// checkQuantile checks a histogram_quantile query reads what it needs to
// give a number: the _bucket series of histograms only, kept apart by le.
// Aggregating le away, or taking a quantile of a counter, is valid PromQL
// that draws nothing.
func checkQuantile(expr string, refs promRefs, types map[string]string) error {
	if !strings.Contains(expr, "histogram_quantile(") {
		return nil
	}
	for name := range refs.metrics {
		base, ok := strings.CutSuffix(name, "_bucket")
		if !ok || types[base] != "histogram" {
			return fmt.Errorf("histogram_quantile over %s: not the _bucket series of a histogram", name)
		}
	}
	if !slices.Contains(refs.groupBy, "le") {
		return errors.New("histogram_quantile without le in its by (…): the buckets are summed away")
	}
	return nil
}

// scrapeLabels are added by Prometheus to every series it scrapes.
var scrapeLabels = map[string]bool{"job": true, "instance": true}

var legendRE = regexp.MustCompile(`\{\{\s*(\w+)\s*\}\}`)

// TestPrometheusMetrics checks every metric a Prometheus query uses is in
// the service's /metrics, with the labels the query matches, groups by or
// shows in its legend, so renaming a metric or a label breaks this test
// rather than a panel.
func TestPrometheusMetrics(t *testing.T) {
	// Some activity, so every series is written (the labelled ones appear
	// only once something reported them), with the histograms the service
	// runs (cmd/viewcount wires the same).
	m := viewcount.NewMetricsWith(latency.New())
	m.ObserveRequest("/p.gif", 200, time.Millisecond)
	m.Received.Add(5)
	m.Published.Add(4)
	m.PublishErrors.Add(1)
	m.Validated(viewcount.Valid)
	m.Validated(viewcount.BotUA)
	m.Inserted.Add(2)
	m.SetPipelineLag(1500)
	m.SetPartitionState(0, viewcount.PartitionState{RetryKeys: 3, ViewKeys: 2, Held: 1})
	m.SetHealth("stream", nil)
	m.SetHealth("partition/0", errors.New("stalled"))
	m.SetMemoryParts([]viewcount.MemoryPart{{Name: "go", Budget: 2 << 20, Used: func() int64 { return 1 << 20 }}})
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	series := exposition(buf.String())
	types := familyTypes(buf.String())

	checked := 0
	for _, d := range loadDashboards(t) {
		qs, err := queries(d)
		if err != nil {
			t.Fatal(err)
		}
		vars := map[string]bool{}
		for _, v := range d.Templating.List {
			vars[v.Name] = true
		}
		for _, q := range qs {
			if q.ds.Type != typePrometheus {
				continue
			}
			checked++
			refs, err := parsePromQL(q.text, vars)
			if err != nil {
				t.Errorf("%s: %q: %v", q.key, q.text, err)
				continue
			}
			if len(refs.metrics) == 0 {
				t.Errorf("%s: %q reads no metric", q.key, q.text)
			}
			known := map[string]bool{}
			for name, labels := range refs.metrics {
				if series[name] == nil {
					t.Errorf("%s: metric %s is not in /metrics", q.key, name)
					continue
				}
				for _, l := range labels {
					if !series[name][l] && !scrapeLabels[l] {
						t.Errorf("%s: %s has no label %q in /metrics", q.key, name, l)
					}
				}
				for l := range series[name] {
					known[l] = true
				}
			}
			if err := checkQuantile(q.text, refs, types); err != nil {
				t.Errorf("%s: %q: %v", q.key, q.text, err)
			}
			used := refs.groupBy
			for _, m := range legendRE.FindAllStringSubmatch(q.legend, -1) {
				used = append(used, m[1])
			}
			for _, l := range used {
				if !known[l] && !scrapeLabels[l] {
					t.Errorf("%s: label %q (by, on or legend) is on none of its metrics", q.key, l)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no Prometheus query found")
	}
}

// TestParsePromQL checks the tokenizer on the shapes the dashboards use.
func TestParsePromQL(t *testing.T) {
	vars := map[string]bool{"job": true}
	f := func(expr string, want map[string][]string, groupBy ...string) {
		t.Helper()
		got, err := parsePromQL(expr, vars)
		if err != nil {
			t.Fatalf("%q: %v", expr, err)
		}
		if fmt.Sprint(sorted(got.metrics)) != fmt.Sprint(sorted(want)) || fmt.Sprint(got.groupBy) != fmt.Sprint(groupBy) {
			t.Errorf("%q: got %v by %v, want %v by %v", expr, got.metrics, got.groupBy, want, groupBy)
		}
	}
	f("sum(rate(a_total[$__rate_interval]))", map[string][]string{"a_total": {}})
	f(`sum by (verdict) (rate(a_total{verdict!="valid", job=~"$job"}[5m]))`, map[string][]string{"a_total": {"verdict", "job"}}, "verdict")
	f("max without(instance)(b) / on (job) group_left c offset 1h > 0.5", map[string][]string{"b": {}, "c": {}}, "instance", "job")
	f("histogram_quantile(0.99, sum by (le) (rate(d_bucket[1m]))) * 1e3", map[string][]string{"d_bucket": {}}, "le")
	f(`label_values(e{part="lag"}, part)`, map[string][]string{"e": {"part"}}, "part")
	f(`count(f == bool 1) or vector(0)`, map[string][]string{"f": {}})

	for _, bad := range []string{`{__name__="x"}`, "rate(x[$__nosuch])", `x{a="b"`, "sum(x[5m)"} {
		if got, err := parsePromQL(bad, vars); err == nil {
			t.Errorf("%q: parsed as %v, want an error", bad, got.metrics)
		}
	}
}

// TestCheckQuantile: a quantile needs a histogram's buckets, by le.
func TestCheckQuantile(t *testing.T) {
	types := map[string]string{"h_seconds": "histogram", "c_total": "counter"}
	f := func(expr string, ok bool) {
		t.Helper()
		refs, err := parsePromQL(expr, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkQuantile(expr, refs, types); (err == nil) != ok {
			t.Errorf("%q: %v, want ok %v", expr, err, ok)
		}
	}
	f("histogram_quantile(0.99, sum by (le, route) (rate(h_seconds_bucket[5m])))", true)
	f("histogram_quantile(0.99, sum by (route) (rate(h_seconds_bucket[5m])))", false)
	f("histogram_quantile(0.99, sum by (le) (rate(h_seconds_count[5m])))", false)
	f("histogram_quantile(0.99, sum by (le) (rate(c_total_bucket[5m])))", false)
	f("sum(rate(h_seconds_count[5m]))", true)
}

func sorted(m map[string][]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+fmt.Sprint(v))
	}
	sort.Strings(out)
	return out
}

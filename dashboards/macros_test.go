package dashboards

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"
)

// This file turns a dashboard's ClickHouse query into the SQL Grafana
// sends, in the order the ClickHouse data source plugin (v4,
// grafana/clickhouse-datasource) applies the steps:
//
//  1. the browser expands $__conditionalAll(cond, $var) to cond, or to 1=1
//     when $var selects All or is empty (CHDatasource.applyConditionalAll);
//  2. Grafana's template service substitutes variables: $var, ${var},
//     ${var:format}, [[var]], and its built-ins ($__from, $__interval, …);
//     a multi-value without a format is written 'a','b' (the plugin's
//     format function), a single value as it is;
//  3. the plugin's backend expands its macros (pkg/macros):
//     $__timeFilter(c) → c >= toDateTime(<from s>) AND c <= toDateTime(<to s>)
//     and the others in chMacros below.
//
// Anything else that looks like a variable or macro is an error, so a
// dashboard cannot use a macro whose expansion nobody checked.

// env is what Grafana knows when it sends a query: the dashboard's time
// range and interval, and each variable's selection.
type env struct {
	from, to time.Time
	interval time.Duration
	vars     map[string]selection
}

// selection is a variable's current state.
type selection struct {
	all      bool     // "All" is selected
	values   []string // the selected values (when not all)
	options  []string // every value it offers ("All" expands to these)
	allValue string   // the variable's custom all value, if any
	multi    bool     // a multi-value variable: its value is a list even with one selected
}

// current returns the values a reference to the variable stands for, and
// whether they are a list (formatted 'a','b') or a single value.
func (s selection) current() ([]string, bool) {
	if s.all {
		if s.allValue != "" {
			return []string{s.allValue}, false
		}
		return s.options, true
	}
	return s.values, s.multi || len(s.values) != 1
}

// grafanaBuiltins are the global variables Grafana's template service
// fills in itself (step 2).
var grafanaBuiltins = map[string]func(e env) string{
	"__from":        func(e env) string { return fmt.Sprint(e.from.UnixMilli()) },
	"__to":          func(e env) string { return fmt.Sprint(e.to.UnixMilli()) },
	"__interval":    func(e env) string { return promDuration(e.interval) },
	"__interval_ms": func(e env) string { return fmt.Sprint(e.interval.Milliseconds()) },
	"__range_s":     func(e env) string { return fmt.Sprint(int64(e.to.Sub(e.from).Seconds())) },
}

// chMacro is one backend macro: nargs arguments in parentheses, or none
// and no parentheses when nargs is 0.
type chMacro struct {
	nargs  int
	expand func(e env, args []string) string
}

func dateTime(t time.Time) string { return fmt.Sprintf("toDateTime(%d)", t.Unix()) }
func dateTime64(t time.Time) string {
	return fmt.Sprintf("fromUnixTimestamp64Milli(%d)", t.UnixMilli())
}

// intervalSeconds is the plugin's max(interval, 1 s) in whole seconds.
func intervalSeconds(e env) int { return int(math.Max(e.interval.Seconds(), 1)) }

// chMacros are the plugin's macros (pkg/macros/macros.go) with its exact
// output; $__dateTimeFilter, $__timeGroup and the statement macros
// ($__columns, …) are left out until a dashboard needs them.
var chMacros = map[string]chMacro{
	"timeFilter": {1, func(e env, a []string) string {
		return fmt.Sprintf("%s >= %s AND %s <= %s", a[0], dateTime(e.from), a[0], dateTime(e.to))
	}},
	"timeFilter_ms": {1, func(e env, a []string) string {
		return fmt.Sprintf("%s >= %s AND %s <= %s", a[0], dateTime64(e.from), a[0], dateTime64(e.to))
	}},
	"dateFilter": {1, func(e env, a []string) string {
		return fmt.Sprintf("%s >= toDate('%s') AND %s <= toDate('%s')", a[0], e.from.UTC().Format(time.DateOnly), a[0], e.to.UTC().Format(time.DateOnly))
	}},
	"timeFrom":    {1, func(e env, a []string) string { return a[0] + " >= " + dateTime(e.from) }},
	"timeTo":      {1, func(e env, a []string) string { return a[0] + " <= " + dateTime(e.to) }},
	"fromTime":    {0, func(e env, _ []string) string { return dateTime(e.from) }},
	"toTime":      {0, func(e env, _ []string) string { return dateTime(e.to) }},
	"fromTime_ms": {0, func(e env, _ []string) string { return dateTime64(e.from) }},
	"toTime_ms":   {0, func(e env, _ []string) string { return dateTime64(e.to) }},
	"interval_s":  {0, func(e env, _ []string) string { return fmt.Sprint(intervalSeconds(e)) }},
	"timeInterval": {1, func(e env, a []string) string {
		return fmt.Sprintf("toStartOfInterval(toDateTime(%s), INTERVAL %d second)", a[0], intervalSeconds(e))
	}},
	"timeInterval_ms": {1, func(e env, a []string) string {
		return fmt.Sprintf("toStartOfInterval(toDateTime64(%s, 3), INTERVAL %d millisecond)", a[0], max(e.interval.Milliseconds(), 1))
	}},
}

var (
	conditionalAllRE = regexp.MustCompile(`\$__conditionalAll\(`)
	varRefRE         = regexp.MustCompile(`\$\{(\w+)(?::(\w+))?\}|\[\[(\w+)\]\]|\$(\w+)`)
	macroRE          = regexp.MustCompile(`\$__(\w+)`)
)

// expandClickHouse returns the SQL the plugin would send for sql under e.
func expandClickHouse(sql string, e env) (string, error) {
	// Step 1, innermost (last) first, as the plugin does.
	for {
		locs := conditionalAllRE.FindAllStringIndex(sql, -1)
		if len(locs) == 0 {
			break
		}
		start, open := locs[len(locs)-1][0], locs[len(locs)-1][1]-1
		args, end, err := macroArgs(sql, open)
		if err != nil || len(args) != 2 {
			return "", fmt.Errorf("$__conditionalAll: want (condition, $variable): %v", err)
		}
		m := varRefRE.FindStringSubmatch(args[1])
		if m == nil {
			return "", fmt.Errorf("$__conditionalAll: %q is not a variable", args[1])
		}
		sel, ok := e.vars[m[1]+m[3]+m[4]]
		if !ok {
			return "", fmt.Errorf("$__conditionalAll: unknown variable %q", args[1])
		}
		phrase := args[0]
		if vals, _ := sel.current(); sel.all || len(vals) == 0 || (len(vals) == 1 && vals[0] == "") {
			phrase = "1=1"
		}
		sql = sql[:start] + phrase + sql[end:]
	}
	// Step 2.
	var err error
	sql = varRefRE.ReplaceAllStringFunc(sql, func(ref string) string {
		m := varRefRE.FindStringSubmatch(ref)
		name, format := m[1]+m[3]+m[4], m[2]
		if _, ok := chMacros[strings.TrimPrefix(name, "__")]; ok && strings.HasPrefix(name, "__") {
			return ref // the backend's, step 3
		}
		if b, ok := grafanaBuiltins[name]; ok {
			return b(e)
		}
		sel, ok := e.vars[name]
		if !ok {
			err = fmt.Errorf("unknown variable or macro %s", ref)
			return ref
		}
		s, ferr := formatValue(sel, format)
		if ferr != nil {
			err = fmt.Errorf("%s: %w", ref, ferr)
		}
		return s
	})
	if err != nil {
		return "", err
	}
	// Step 3.
	var b strings.Builder
	for {
		loc := macroRE.FindStringSubmatchIndex(sql)
		if loc == nil {
			b.WriteString(sql)
			return b.String(), nil
		}
		name := sql[loc[2]:loc[3]]
		mac, ok := chMacros[name]
		if !ok {
			return "", fmt.Errorf("unknown macro $__%s", name)
		}
		b.WriteString(sql[:loc[0]])
		rest := sql[loc[1]:]
		var args []string
		if mac.nargs > 0 {
			if !strings.HasPrefix(rest, "(") {
				return "", fmt.Errorf("$__%s: want %d argument(s) in parentheses", name, mac.nargs)
			}
			var end int
			args, end, err = macroArgs(rest, 0)
			if err != nil || len(args) != mac.nargs {
				return "", fmt.Errorf("$__%s: want %d argument(s), got %q (%v)", name, mac.nargs, args, err)
			}
			rest = rest[end:]
		}
		b.WriteString(mac.expand(e, args))
		sql = rest
	}
}

// macroArgs parses the parenthesised argument list opening at s[open]: the
// arguments split at top-level commas and trimmed, and the index just past
// the closing parenthesis. Quotes and nested parentheses are respected.
func macroArgs(s string, open int) ([]string, int, error) {
	depth, start := 0, open+1
	var args []string
	for i := open; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'', '"', '`':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, 0, fmt.Errorf("unterminated %c", c)
			}
			i += j + 1
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				args = append(args, strings.TrimSpace(s[start:i]))
				return args, i + 1, nil
			}
		case ',':
			if depth == 1 {
				args = append(args, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return nil, 0, fmt.Errorf("unbalanced parentheses")
}

// formatValue writes a variable's value as Grafana does for format ("" is
// the plugin's own: a list as 'a','b', a single value as it is).
func formatValue(sel selection, format string) (string, error) {
	vals, list := sel.current()
	quote := func(q string) string {
		out := make([]string, len(vals))
		for i, v := range vals {
			out[i] = q + strings.ReplaceAll(v, q, `\`+q) + q
		}
		return strings.Join(out, ",")
	}
	switch format {
	case "":
		if list {
			return quote("'"), nil
		}
		return strings.Join(vals, ","), nil
	case "singlequote":
		return quote("'"), nil
	case "doublequote":
		return quote(`"`), nil
	case "csv", "raw":
		return strings.Join(vals, ","), nil
	}
	return "", fmt.Errorf("variable format %q is not known to these tests", format)
}

// promDuration writes d the way Grafana writes $__interval (1m, 30s, 2h).
func promDuration(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return fmt.Sprintf("%dms", d.Milliseconds())
}

// TestExpandClickHouse checks the expansion against the plugin's documented
// outputs (docs/sources/query-editor.md) and Grafana's variable formats.
func TestExpandClickHouse(t *testing.T) {
	e := env{
		from:     time.Unix(1415792726, 123e6).UTC(),
		to:       time.Unix(1447328726, 456e6).UTC(),
		interval: 20 * time.Second,
		vars: map[string]selection{
			"site":   {values: []string{"a.example"}},
			"reason": {all: true, options: []string{"bot_ua", "rate"}, multi: true},
			"one":    {values: []string{"bot_ua"}, multi: true},
			"quoted": {values: []string{"it's"}},
			"empty":  {values: []string{""}},
		},
	}
	f := func(in, want string) {
		t.Helper()
		got, err := expandClickHouse(in, e)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if got != want {
			t.Errorf("%q:\n got %q\nwant %q", in, got, want)
		}
	}
	f("$__timeFilter(time)", "time >= toDateTime(1415792726) AND time <= toDateTime(1447328726)")
	f("$__timeFilter_ms(time)", "time >= fromUnixTimestamp64Milli(1415792726123) AND time <= fromUnixTimestamp64Milli(1447328726456)")
	f("$__dateFilter(date)", "date >= toDate('2014-11-12') AND date <= toDate('2015-11-12')")
	f("$__timeFrom(time) AND $__timeTo(time)", "time >= toDateTime(1415792726) AND time <= toDateTime(1447328726)")
	f("$__fromTime,$__toTime,$__fromTime_ms,$__toTime_ms", "toDateTime(1415792726),toDateTime(1447328726),fromUnixTimestamp64Milli(1415792726123),fromUnixTimestamp64Milli(1447328726456)")
	f("INTERVAL $__interval_s second", "INTERVAL 20 second")
	f("$__timeInterval(time)", "toStartOfInterval(toDateTime(time), INTERVAL 20 second)")
	f("$__timeInterval_ms(time)", "toStartOfInterval(toDateTime64(time, 3), INTERVAL 20000 millisecond)")
	f("$__timeInterval(toDateTime(t, 'UTC'))", "toStartOfInterval(toDateTime(toDateTime(t, 'UTC')), INTERVAL 20 second)")
	f("site = '${site}' AND site = '$site' AND site = '[[site]]'", "site = 'a.example' AND site = 'a.example' AND site = 'a.example'")
	f("$__conditionalAll(verdict IN (${reason:singlequote}), $reason)", "1=1")
	f("$__conditionalAll(verdict IN (${one:singlequote}), $one)", "verdict IN ('bot_ua')")
	f("$__conditionalAll(page = '$empty', $empty)", "1=1")
	f("verdict IN ($reason) OR verdict IN ($one)", "verdict IN ('bot_ua','rate') OR verdict IN ('bot_ua')")
	f("${quoted:singlequote} ${reason:csv}", `'it\'s' bot_ua,rate`)
	f("$__from-$__to $__interval $__interval_ms $__range_s", "1415792726123-1447328726456 20s 20000 31536000")

	bad := func(in string) {
		t.Helper()
		if got, err := expandClickHouse(in, e); err == nil {
			t.Errorf("%q: expanded to %q, want an error", in, got)
		}
	}
	bad("$__timeGroup(time, 5m)")   // a macro the tests do not model
	bad("$__timeFilter(a, b)")      // wrong argument count
	bad("$__timeFilter")            // no arguments
	bad("$nosuch")                  // unknown variable
	bad("${site:percentencode}")    // unknown format
	bad("$__conditionalAll(x, 1)")  // not a variable
	bad("$__timeFilter(time")       // unbalanced
	bad("$__conditionalAll(x, $y)") // unknown variable
}

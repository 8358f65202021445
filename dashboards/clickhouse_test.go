package dashboards

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/analyst"
	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// columns are the columns each ClickHouse query must return, by query key.
// A query missing here fails the test: a new panel states what it returns.
var columns = map[string][]string{
	"viewcount-overview/$site":                                       {"site"},
	"viewcount-overview/Valid views per minute/A":                    {"time", "views"},
	"viewcount-overview/Unique visitors per hour/A":                  {"time", "uniques"},
	"viewcount-overview/Rejected events by reason/A":                 {"t", "verdict", "events"},
	"viewcount-overview/Top pages/A":                                 {"page", "views", "uniques"},
	"viewcount-invalid-traffic/$site":                                {"site"},
	"viewcount-invalid-traffic/$reason":                              {"verdict"},
	"viewcount-invalid-traffic/Rejected events by reason/A":          {"t", "verdict", "events"},
	"viewcount-invalid-traffic/Filtered share/A":                     {"events", "filtered", "filtered_share"},
	"viewcount-invalid-traffic/Filtered share over time/A":           {"t", "filtered_share"},
	"viewcount-invalid-traffic/Rejected by reason/A":                 {"verdict", "events"},
	"viewcount-invalid-traffic/Top rejected pages/A":                 {"page", "rejected", "events", "rejected_share", "top_reason"},
	"viewcount-invalid-traffic/Top rejected user agents/A":           {"ua", "rejected", "reasons"},
	"viewcount-invalid-traffic/Top rejected user agents by reason/A": {"reason", "ua", "ua_browser", "ua_device", "rejected"},
	"viewcount-invalid-traffic/Referrer spam hosts/A":                {"host", "events", "pages"},
	"viewcount-invalid-traffic/Datacenter hits/A":                    {"t", "verdict", "events"},
}

// t0 is the history's hour; the dashboards are queried over t0-1h..t0+3h.
var t0 = time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)

const (
	firefox   = "Mozilla/5.0 (X11; Linux x86_64; rv:145.0) Gecko/20100101 Firefox/145.0"
	chrome    = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36"
	googlebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	curl      = "curl/8.0"
	requests  = "python-requests/2.32"
)

// history is a small judged history with every verdict a panel shows.
// Within the range, site a.example has 6 valid views (/home 4 by visitors
// 1,2,3,1; /about 2 by 1,4) and 10 rejected events (bot_ua 4, bad_referrer
// 3, datacenter 2, rate 1); one valid and one bot_ua event lie an hour
// before the range, and b.example has one of each.
func history() []viewcount.Verdict {
	type row struct {
		min     int
		site    string
		page    string
		ua      string
		visitor uint64
		reason  viewcount.Reason
		ref     string
		refHost string
		dc      bool
	}
	a, b := "a.example", "b.example"
	rows := []row{
		{1, a, "/home", firefox, 1, viewcount.Valid, "", "", false},
		{2, a, "/home", firefox, 2, viewcount.Valid, "", "", false},
		{3, a, "/home", chrome, 3, viewcount.Valid, "", "", false},
		{61, a, "/home", firefox, 1, viewcount.Valid, "", "", false},
		{5, a, "/about", firefox, 1, viewcount.Valid, "", "", false},
		{6, a, "/about", chrome, 4, viewcount.Valid, "", "", false},
		{10, a, "/home", curl, 10, viewcount.BotUA, "", "", false},
		{11, a, "/home", curl, 10, viewcount.BotUA, "", "", false},
		{13, a, "/home", curl, 10, viewcount.BotUA, "", "", false},
		{12, a, "/about", googlebot, 11, viewcount.BotUA, "", "", false},
		{20, a, "/home", firefox, 12, viewcount.BadReferrer, "https://spam.example/x", "spam.example", false},
		// Rows written before the validator filled ref_host have only the referrer.
		{21, a, "/home", firefox, 13, viewcount.BadReferrer, "http://seo-offers.example/a", "", false},
		{22, a, "/pricing", firefox, 12, viewcount.BadReferrer, "https://spam.example/y", "spam.example", false},
		{30, a, "/pricing", requests, 20, viewcount.Datacenter, "", "", true},
		{31, a, "/pricing", requests, 20, viewcount.Datacenter, "", "", true},
		{32, a, "/pricing", requests, 21, viewcount.Rate, "", "", true},
		{-120, a, "/home", firefox, 1, viewcount.Valid, "", "", false},
		{-120, a, "/home", curl, 10, viewcount.BotUA, "", "", false},
		{5, b, "/x", firefox, 30, viewcount.Valid, "", "", false},
		{6, b, "/x", curl, 31, viewcount.BotUA, "", "", false},
	}
	// The browser and device class the validator derives from each agent.
	class := map[string][2]string{firefox: {"Firefox", "desktop"}, chrome: {"Chrome", "desktop"},
		googlebot: {"", "other"}, curl: {"", "other"}, requests: {"", "other"}}
	out := make([]viewcount.Verdict, len(rows))
	for i, r := range rows {
		out[i] = viewcount.Verdict{
			Event: viewcount.Event{Time: t0.Add(time.Duration(r.min) * time.Minute), Site: r.site, Page: r.page,
				Referrer: r.ref, UA: r.ua, ID: fmt.Sprint("e", i), Visitor: r.visitor, Network: r.visitor,
				Source: viewcount.SourcePixel, Datacenter: r.dc},
			Reason: r.reason, Seq: uint64(i + 1),
			Dims: viewcount.Dims{RefHost: r.refHost, Browser: class[r.ua][0], Device: class[r.ua][1]},
		}
	}
	return out
}

// resolve selects each variable of d the way Grafana does on load: its
// saved selection, else All when it offers All, else its first value. A
// query variable's values come from running its query. With first, a
// variable offering All selects its first value instead, so both
// branches of $__conditionalAll run.
func resolve(ctx context.Context, s store.Store, d dashboard, base env, first bool) (env, error) {
	e := base
	e.vars = map[string]selection{}
	for _, v := range d.Templating.List {
		sel := selection{multi: v.Multi, allValue: v.AllValue}
		switch v.Type {
		case "query":
			if v.Datasource == nil || v.Datasource.Type != typeClickHouse {
				sel.values = []string{".*"} // checked by TestPrometheusMetrics, never run
				break
			}
			text, err := variableQuery(v.Query)
			if err != nil {
				return e, err
			}
			sql, err := expandClickHouse(text, e)
			if err != nil {
				return e, fmt.Errorf("variable %s: %w", v.Name, err)
			}
			res, err := s.Query(ctx, sql, nil)
			if err != nil {
				return e, fmt.Errorf("variable %s: %s: %w", v.Name, sql, err)
			}
			for _, r := range res.TextRows() {
				sel.options = append(sel.options, r[0])
			}
		default: // custom, constant, textbox, interval: the options are the query, comma-separated
			text, err := variableQuery(v.Query)
			if err != nil {
				return e, err
			}
			sel.options = splitOptions(text)
		}
		var saved []string
		if len(v.Current.Value) > 0 {
			if err := json.Unmarshal(v.Current.Value, &saved); err != nil {
				var one string
				if err := json.Unmarshal(v.Current.Value, &one); err != nil {
					return e, fmt.Errorf("variable %s: current value %s", v.Name, v.Current.Value)
				}
				saved = []string{one}
			}
		}
		switch {
		case sel.values != nil:
		case first && v.IncludeAll && len(sel.options) > 0:
			sel.values = sel.options[:1]
		case slices.Contains(saved, "$__all") || len(saved) == 0 && v.IncludeAll:
			sel.all = true
		case len(saved) > 0:
			sel.values = saved
		case len(sel.options) > 0:
			sel.values = sel.options[:1]
		default:
			return e, fmt.Errorf("variable %s has no value: the history must give its query rows", v.Name)
		}
		e.vars[v.Name] = sel
	}
	return e, nil
}

// splitOptions reads a custom variable's options, "a, b, c".
func splitOptions(q string) []string {
	var out []string
	for _, o := range strings.Split(q, ",") {
		if o = strings.TrimSpace(o); o != "" {
			out = append(out, o)
		}
	}
	return out
}

// TestClickHouseQueries runs every ClickHouse query of every dashboard, as
// the plugin would send it, on the migrated schema holding history(): each
// must run, return its stated columns and at least one row (a time first
// for a time series), and a few return exact numbers.
func TestClickHouseQueries(t *testing.T) {
	ctx := t.Context()
	s := storetest.Open(t)
	if err := migrations.Apply(ctx, s, nil); err != nil {
		t.Fatal(err)
	}
	if err := storetest.InsertFed(ctx, s, "", history()); err != nil {
		t.Fatal(err)
	}
	base := env{from: t0.Add(-time.Hour), to: t0.Add(3 * time.Hour), interval: time.Minute}

	got := map[string][][]string{} // rows by pass and key, for the exact checks
	seen := map[string]bool{}
	for _, d := range loadDashboards(t) {
		qs, err := queries(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, pass := range []string{"default", "first"} {
			e, err := resolve(ctx, s, d, base, pass == "first")
			if err != nil {
				t.Fatalf("%s (%s values): %v", d.file, pass, err)
			}
			for _, q := range qs {
				if q.ds.Type != typeClickHouse {
					continue
				}
				seen[q.key] = true
				sql, err := expandClickHouse(q.text, e)
				if err != nil {
					t.Errorf("%s (%s values): %v", q.key, pass, err)
					continue
				}
				// Grafana reads through the SQL listener: what runs is the
				// text the analyst checks print.
				cleared, err := analyst.Check(sql, analyst.Policy{Database: store.DatabaseName(s)})
				if err != nil {
					t.Errorf("%s (%s values): refused by the analyst checks: %v\n%s", q.key, pass, err, sql)
					continue
				}
				res, err := s.Query(ctx, cleared.Text(), nil)
				if err != nil {
					t.Errorf("%s (%s values): %v\n%s", q.key, pass, err, sql)
					continue
				}
				want, ok := columns[q.key]
				if !ok {
					t.Errorf("%s: returns %v; add its columns to the table in this test", q.key, res.Columns)
				} else if !slices.Equal(res.Columns, want) {
					t.Errorf("%s: columns %v, want %v", q.key, res.Columns, want)
				}
				if len(res.TextRows()) == 0 {
					t.Errorf("%s (%s values): no rows from the history\n%s", q.key, pass, sql)
				}
				if q.timeseries {
					for _, r := range res.TextRows() {
						if _, err := time.Parse(time.DateTime, r[0]); err != nil {
							t.Errorf("%s: a time series whose first column is not a time: %q", q.key, r[0])
							break
						}
					}
				}
				got[pass+" "+q.key] = res.TextRows()
			}
		}
	}
	for key := range columns {
		if !seen[key] {
			t.Errorf("%s: in the columns table but in no dashboard", key)
		}
	}

	exact := func(key string, want ...[]string) {
		t.Helper()
		if !slices.EqualFunc(got[key], want, slices.Equal) {
			t.Errorf("%s:\n got %q\nwant %q", key, got[key], want)
		}
	}
	row := func(cells ...string) []string { return cells }
	const ov, inv = "default viewcount-overview/", "default viewcount-invalid-traffic/"
	exact(ov+"$site", row("a.example"), row("b.example"))
	// Day buckets: the whole day of the range's start, so /home counts the
	// view an hour before the range too; visitor 1's repeat is one unique.
	exact(ov+"Top pages/A", row("/home", "5", "3"), row("/about", "2", "2"))
	exact(ov+"Unique visitors per hour/A", row("2026-11-02 10:00:00", "4"), row("2026-11-02 11:00:00", "1"))
	exact(inv+"$reason", row("bad_referrer"), row("bot_ua"), row("datacenter"), row("rate"))
	exact(inv+"Filtered share/A", row("16", "10", "0.625"))
	exact(inv+"Rejected by reason/A", row("bot_ua", "4"), row("bad_referrer", "3"), row("datacenter", "2"), row("rate", "1"))
	exact("first viewcount-invalid-traffic/Rejected by reason/A", row("bad_referrer", "3"))
	exact(inv+"Top rejected pages/A",
		row("/home", "5", "9", "0.556", "bot_ua"),
		row("/pricing", "4", "4", "1", "datacenter"),
		row("/about", "1", "3", "0.333", "bot_ua"))
	exact(inv+"Top rejected user agents/A",
		row(firefox, "3", "bad_referrer"),
		row(curl, "3", "bot_ua"),
		row(requests, "3", "datacenter, rate"),
		row(googlebot, "1", "bot_ua"))
	exact(inv+"Top rejected user agents by reason/A",
		row("bad_referrer", firefox, "Firefox", "desktop", "3"),
		row("bot_ua", curl, "", "other", "3"),
		row("bot_ua", googlebot, "", "other", "1"),
		row("datacenter", requests, "", "other", "2"),
		row("rate", requests, "", "other", "1"))
	exact("first viewcount-invalid-traffic/Top rejected user agents by reason/A", row("bad_referrer", firefox, "Firefox", "desktop", "3"))
	exact(inv+"Referrer spam hosts/A", row("spam.example", "2", "2"), row("seo-offers.example", "1", "1"))
	// Time series: the per-minute rows add up to the history's events.
	sums := func(key string, valueCol int) map[string]int {
		out := map[string]int{}
		for _, r := range got[key] {
			n, err := strconv.Atoi(r[valueCol])
			if err != nil {
				t.Fatalf("%s: %q: %v", key, r, err)
			}
			out[r[valueCol-1]] += n
		}
		return out
	}
	if s := sums(inv+"Datacenter hits/A", 2); fmt.Sprint(s) != "map[datacenter:2 rate:1]" {
		t.Errorf("datacenter hits by verdict: %v", s)
	}
	if s := sums(inv+"Rejected events by reason/A", 2); fmt.Sprint(s) != "map[bad_referrer:3 bot_ua:4 datacenter:2 rate:1]" {
		t.Errorf("rejected events by reason: %v", s)
	}
	if s := sums(ov+"Valid views per minute/A", 1); fmt.Sprint(s) != "map[2026-11-02 10:01:00:1 2026-11-02 10:02:00:1 2026-11-02 10:03:00:1 2026-11-02 10:05:00:1 2026-11-02 10:06:00:1 2026-11-02 11:01:00:1]" {
		t.Errorf("valid views per minute: %v", s)
	}
}

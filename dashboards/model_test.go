package dashboards

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/goccy/go-yaml"
)

// The data source types the dashboards may use: each has a checker in
// these tests. Any other type fails TestDataSources.
const (
	typeClickHouse = "grafana-clickhouse-datasource"
	typePrometheus = "prometheus"
)

// dashboard is the part of Grafana's dashboard JSON model the tests read.
type dashboard struct {
	file       string
	UID        string `json:"uid"`
	Title      string `json:"title"`
	Templating struct {
		List []variable `json:"list"`
	} `json:"templating"`
	Panels []panel `json:"panels"`
}

type dsRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type panel struct {
	Title      string   `json:"title"`
	Type       string   `json:"type"`
	Datasource *dsRef   `json:"datasource"`
	Targets    []target `json:"targets"`
	Panels     []panel  `json:"panels"` // a collapsed row keeps its panels here
}

type target struct {
	RefID        string `json:"refId"`
	Datasource   *dsRef `json:"datasource"`
	RawSQL       string `json:"rawSql"`
	Expr         string `json:"expr"`
	Format       *int   `json:"format"` // ClickHouse plugin: 0 time series, 1 table
	LegendFormat string `json:"legendFormat"`
}

type variable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Datasource *dsRef          `json:"datasource"`
	Query      json.RawMessage `json:"query"` // a string, or an object with the query in it
	Multi      bool            `json:"multi"`
	IncludeAll bool            `json:"includeAll"`
	AllValue   string          `json:"allValue"`
	Current    struct {
		Value json.RawMessage `json:"value"` // a string or a list of strings
	} `json:"current"`
}

// query is one query a dashboard sends to a data source.
type query struct {
	key        string // "<dashboard uid>/<panel title>/<refId>" or "<dashboard uid>/$<variable>"
	ds         dsRef
	text       string // SQL or PromQL
	legend     string
	timeseries bool
}

// loadDashboards reads every *.json in this directory.
func loadDashboards(t *testing.T) []dashboard {
	t.Helper()
	files, err := filepath.Glob("*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 {
		t.Fatalf("found dashboards %v: want at least overview, invalid-traffic and pipeline-health", files)
	}
	sort.Strings(files)
	var out []dashboard
	uids := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d dashboard
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		d.file = f
		// Provisioning keys dashboards by uid: a second file with the same
		// one would silently replace the first.
		if d.UID == "" || uids[d.UID] != "" {
			t.Fatalf("%s: uid %q is empty or already used by %s", f, d.UID, uids[d.UID])
		}
		uids[d.UID] = f
		out = append(out, d)
	}
	return out
}

// queries lists every query of d: template variables first (in order, as
// Grafana resolves them), then each panel's targets, rows included.
func queries(d dashboard) ([]query, error) {
	var out []query
	for _, v := range d.Templating.List {
		switch v.Type {
		case "query":
			text, err := variableQuery(v.Query)
			if err != nil {
				return nil, fmt.Errorf("%s: variable %s: %w", d.file, v.Name, err)
			}
			if v.Datasource == nil {
				return nil, fmt.Errorf("%s: variable %s has no data source", d.file, v.Name)
			}
			out = append(out, query{key: d.UID + "/$" + v.Name, ds: *v.Datasource, text: text})
		case "custom", "constant", "textbox", "interval":
		default:
			return nil, fmt.Errorf("%s: variable %s: type %q is not known to these tests", d.file, v.Name, v.Type)
		}
	}
	var walk func(ps []panel) error
	walk = func(ps []panel) error {
		for _, p := range ps {
			for _, tg := range p.Targets {
				ds := tg.Datasource
				if ds == nil {
					ds = p.Datasource
				}
				if ds == nil {
					return fmt.Errorf("%s: panel %q target %s has no data source (the default one is not provisioned)", d.file, p.Title, tg.RefID)
				}
				q := query{key: d.UID + "/" + p.Title + "/" + tg.RefID, ds: *ds, legend: tg.LegendFormat}
				switch ds.Type {
				case typeClickHouse:
					q.text = tg.RawSQL
					q.timeseries = tg.Format != nil && *tg.Format == 0
				case typePrometheus:
					q.text = tg.Expr
				default:
					return fmt.Errorf("%s: panel %q: data source type %q is not known to these tests", d.file, p.Title, ds.Type)
				}
				if q.text == "" {
					return fmt.Errorf("%s: panel %q target %s: empty query", d.file, p.Title, tg.RefID)
				}
				out = append(out, q)
			}
			if err := walk(p.Panels); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(d.Panels); err != nil {
		return nil, err
	}
	return out, nil
}

// variableQuery returns a query variable's query: Grafana stores it as a
// string, or as an object whose rawSql (ClickHouse) or query (Prometheus)
// field holds it.
func variableQuery(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var o struct{ RawSQL, Query string }
	if err := json.Unmarshal(raw, &o); err != nil {
		return "", fmt.Errorf("query: %w", err)
	}
	if o.RawSQL != "" {
		return o.RawSQL, nil
	}
	if o.Query != "" {
		return o.Query, nil
	}
	return "", fmt.Errorf("query %s: no rawSql or query", raw)
}

// provisioned returns the data sources provisioning/datasources declares,
// type by uid.
func provisioned(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("provisioning/datasources/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Datasources []struct {
				UID  string `yaml:"uid"`
				Type string `yaml:"type"`
			} `yaml:"datasources"`
		}
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, ds := range doc.Datasources {
			out[ds.UID] = ds.Type
		}
	}
	return out
}

// TestDataSources checks every query names a data source that provisioning
// creates, of a type these tests check: a panel on another type, or on a
// uid nobody provisions, would ship unchecked or empty.
func TestDataSources(t *testing.T) {
	ds := provisioned(t)
	if ds["viewcount-clickhouse"] != typeClickHouse || ds["viewcount-prometheus"] != typePrometheus {
		t.Fatalf("provisioned data sources %v: want viewcount-clickhouse (%s) and viewcount-prometheus (%s)", ds, typeClickHouse, typePrometheus)
	}
	perType := map[string]int{}
	for _, d := range loadDashboards(t) {
		qs, err := queries(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range qs {
			if got := ds[q.ds.UID]; got != q.ds.Type {
				t.Errorf("%s: data source uid %q type %q: provisioning has type %q for it", q.key, q.ds.UID, q.ds.Type, got)
			}
			perType[q.ds.Type]++
		}
	}
	// The dashboards as committed, so a walk that misses a collapsed row or
	// the variables shows: overview 1+4 and invalid-traffic 2+9 ClickHouse
	// queries (variables + panel targets), pipeline-health 35 Prometheus
	// targets (6 of them in its collapsed row).
	want := map[string]int{typeClickHouse: 16, typePrometheus: 35}
	for typ, n := range want {
		if perType[typ] != n {
			t.Errorf("%s queries: got %d, want %d", typ, perType[typ], n)
		}
	}
}

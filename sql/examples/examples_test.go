package examples_test

import (
	"context"
	"math/rand/v2"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/examples"
	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// exampleCase is one analyst example's parameters and the rows it must
// return, computed in Go from the generated events (want).
type exampleCase struct {
	params store.Params
	want   [][]string
}

// TestExampleAnswers runs every file in sql/examples against chDB holding
// generated events (stored and fed to the rollups as validators do) and
// checks its rows against the answer computed here from the same events.
// A file without a case fails, so no example ships untested; uniques are
// exact because every sketch holds fewer distinct ids than its exact
// range (uniqCombined64(12) is exact up to 128).
func TestExampleAnswers(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t)
	if err := migrations.Apply(ctx, s, nil); err != nil {
		t.Fatal(err)
	}
	events := exampleEvents()
	storetest.Insert(t, s, "", events)
	cases := exampleCases(events)

	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".go") && !e.IsDir() {
			continue // the package that embeds them
		}
		name, ok := strings.CutSuffix(e.Name(), ".sql")
		if !ok || e.IsDir() {
			t.Errorf("examples/%s: only .sql files and the package's Go files belong in sql/examples", e.Name())
			continue
		}
		files = append(files, name)
		if _, ok := cases[name]; !ok {
			t.Errorf("examples/%s.sql has no case in exampleCases: every example must be run and checked", name)
		}
	}
	for name := range cases {
		if !slices.Contains(files, name) {
			t.Errorf("exampleCases has %q, which is not a file in sql/examples", name)
		}
	}
	if embedded := examples.Names(); !reflect.DeepEqual(embedded, files) {
		t.Errorf("embedded examples %q, files %q", embedded, files)
	}
	if len(files) < 12 {
		t.Errorf("%d examples, want at least a dozen", len(files))
	}

	placeholder := regexp.MustCompile(`\{(\w+):`)
	for _, name := range files {
		c, ok := cases[name]
		if !ok {
			continue
		}
		t.Run(name, func(t *testing.T) {
			q, _ := examples.Text(name)
			checkHeader(t, q)
			for _, m := range placeholder.FindAllStringSubmatch(q, -1) {
				if _, ok := c.params[m[1]]; !ok {
					t.Errorf("parameter %s has no value in the case", m[1])
				}
			}
			if len(c.want) == 0 {
				t.Fatal("the case expects no rows: give the generated data rows this example returns")
			}
			res, err := s.Query(ctx, q, c.params)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(res.TextRows(), c.want) {
				t.Errorf("columns %q\n got %d rows %q\nwant %d rows %q", res.Columns, len(res.TextRows()), res.TextRows(), len(c.want), c.want)
			}
		})
	}
}

// checkHeader wants an example to open with a comment saying its question,
// the table it reads and its parameters.
func checkHeader(t *testing.T, q string) {
	t.Helper()
	var header strings.Builder
	for line := range strings.Lines(q) {
		if !strings.HasPrefix(line, "--") {
			break
		}
		header.WriteString(line)
	}
	h := header.String()
	if !strings.Contains(h, "?") || !strings.Contains(h, "Reads ") || !strings.Contains(h, "Parameters:") {
		t.Errorf("header comment must ask the question (?), say which table it reads (\"Reads …\") and list its \"Parameters:\"; got\n%s", h)
	}
}

// The generated history: three weeks from Monday 2026-02-23, two sites
// (site b only to prove every example filters by site).
var (
	day0  = time.Date(2026, 2, 23, 0, 0, 0, 0, time.UTC)
	siteA = "a.example"
	siteB = "b.example"
)

const (
	exampleDays     = 21
	exampleVisitors = 60 // per site: every sketch stays in its exact range
)

// exampleEvents returns the generated events, the same on every call: a
// fixed seed (a random source is the one test double allowed).
func exampleEvents() []viewcount.Verdict {
	r := rand.New(rand.NewPCG(12, 34))
	pages := []string{"/", "/blog/a", "/blog/b", "/pricing", "/docs", "/about"}
	rejected := []viewcount.Reason{viewcount.BotUA, viewcount.Rate, viewcount.Datacenter,
		viewcount.Duplicate, viewcount.HeaderMismatch, viewcount.Headless}
	sources := [][2]string{{"(direct)", ""}, {"Google", "google.com"}, {"Reddit", "reddit.com"},
		{"news.example", "news.example"}, {"(direct)", ""}}
	utms := []viewcount.UTM{{}, {}, {}, {Source: "newsletter", Medium: "email", Campaign: "march"},
		{Source: "twitter", Medium: "social", Campaign: "launch"}, {Source: "newsletter", Medium: "email", Campaign: "april"}}
	asns := []uint32{0, 16509, 3320, 24940}
	var out []viewcount.Verdict
	add := func(site string, at time.Time, page string, reason viewcount.Reason) {
		// Fewer visitors on the later pages, so their uniques differ.
		visitor := uint64(1000 + r.IntN(exampleVisitors-9*max(slices.Index(pages, page), 0)))
		if site == siteB {
			visitor += 5000
		}
		src := sources[r.IntN(len(sources))]
		v := viewcount.Verdict{
			Event: viewcount.Event{
				Time: at, Site: site, Page: page, Referrer: src[1], ID: "e" + strconv.Itoa(len(out)),
				UA: "ua-" + strconv.Itoa(r.IntN(3)), Visitor: visitor, Network: visitor%7 + 1,
				Webdriver: reason == viewcount.Headless, Datacenter: reason == viewcount.Datacenter,
				Hints:   viewcount.Hints{Present: r.IntN(2) == 0, ScreenW: uint16(1920 * min(r.IntN(5), 1)), Languages: 2},
				UTM:     utms[r.IntN(len(utms))],
				Country: []string{"DE", "US", "FR", ""}[r.IntN(4)],
				ASN:     asns[r.IntN(len(asns))],
			},
			Reason: reason, Seq: uint64(len(out) + 1),
			Dims: viewcount.Dims{RefSource: src[0], RefHost: src[1], Browser: "Firefox", OS: "Linux", Device: "desktop"},
		}
		out = append(out, v)
	}
	randomTime := func(fromDay, days int) time.Time {
		return day0.AddDate(0, 0, fromDay+r.IntN(days)).Add(time.Duration(r.IntN(24*3600*1000)) * time.Millisecond)
	}
	for range 1500 {
		reason := viewcount.Valid
		if r.IntN(4) == 0 {
			reason = rejected[r.IntN(len(rejected))]
		}
		// Skewed towards the first pages, so the rankings have few ties.
		page := pages[min(int(r.ExpFloat64()*1.6), len(pages)-1)]
		add(siteA, randomTime(0, exampleDays), page, reason)
	}
	// An attack on /pricing in the last week: its filtered share jumps.
	for range 40 {
		add(siteA, randomTime(14, 7), "/pricing", viewcount.Rate)
	}
	for range 60 {
		add(siteB, randomTime(0, exampleDays), pages[r.IntN(len(pages))], rejected[r.IntN(2)])
		add(siteB, randomTime(0, exampleDays), pages[r.IntN(len(pages))], viewcount.Valid)
	}
	return out
}

//go:build !race

package browser

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/store/storetest"
	"github.com/viewcount/viewcount/test/apptest"
	"github.com/viewcount/viewcount/validate/judge"
)

// The dashboard's controls (custom range, interval, pager, CSV, sign-in
// errors) are checked against a history with known times in the site's
// zone. dashZone has no daylight-saving time, so every local day has 24
// hours and the expected bucket counts are fixed.
const dashZone = "Asia/Tokyo"

// pastView is one stored view of the history: day is relative to d0 (20
// days before today in dashZone), clock the local time of day.
type pastView struct {
	day    int
	clock  string
	page   string
	reason viewcount.Reason
}

// dashHistory: 15 valid views on 12 pages inside [d0, d0+2] (one page more
// than the pager's 10), one rejected one, and valid views just outside each
// end. Read in UTC instead of the site's zone, [d0, d0+2] would lose
// d0 00:30 (d0-1 15:30 UTC) and gain both /old/after views (d0+2 20:00
// and 23:00 UTC): other pages and 16 views instead of 15.
var dashHistory = []pastView{
	{-1, "23:30:00", "/old/before", viewcount.Valid},
	{0, "00:30:00", "/p/01", viewcount.Valid}, {0, "10:00:00", "/p/02", viewcount.Valid}, {0, "18:00:00", "/p/03", viewcount.Valid},
	{1, "12:00:10", "/p/01", viewcount.Valid}, {1, "12:05:20", "/p/04", viewcount.Valid}, {1, "12:05:40", "/p/05", viewcount.Valid},
	{1, "13:00:00", "/p/06", viewcount.Valid}, {1, "14:00:00", "/p/03", viewcount.BotUA}, {1, "20:00:00", "/p/07", viewcount.Valid},
	{1, "23:59:00", "/p/02", viewcount.Valid},
	{2, "00:00:00", "/p/08", viewcount.Valid}, {2, "08:00:00", "/p/09", viewcount.Valid}, {2, "09:00:00", "/p/10", viewcount.Valid},
	{2, "09:30:00", "/p/11", viewcount.Valid}, {2, "15:00:00", "/p/12", viewcount.Valid}, {2, "23:30:00", "/p/01", viewcount.Valid},
	{3, "05:00:00", "/old/after", viewcount.Valid}, {3, "08:00:00", "/old/after", viewcount.Valid},
}

// dashDays are the history's calendar days in dashZone.
type dashDays struct {
	loc   *time.Location
	today time.Time // local midnight
	d0    time.Time
}

// newDashDays takes today from the clock the page reads too; a run across
// midnight in dashZone (15:00 UTC) would see two todays.
func newDashDays(t *testing.T) dashDays {
	t.Helper()
	loc, err := time.LoadLocation(dashZone)
	if err != nil {
		t.Fatal(err)
	}
	y, m, d := time.Now().In(loc).Date()
	today := time.Date(y, m, d, 0, 0, 0, 0, loc)
	return dashDays{loc: loc, today: today, d0: today.AddDate(0, 0, -20)}
}

func (dd dashDays) date(day int) string { return dd.d0.AddDate(0, 0, day).Format(time.DateOnly) }

func (v pastView) at(dd dashDays) time.Time {
	c, err := time.Parse(time.TimeOnly, v.clock)
	if err != nil {
		panic(err)
	}
	d := dd.d0.AddDate(0, 0, v.day)
	return time.Date(d.Year(), d.Month(), d.Day(), c.Hour(), c.Minute(), c.Second(), 0, dd.loc)
}

// setZone sets the site's time zone through the admin API.
func setZone(t *testing.T, c *apptest.Client, site, zone string) {
	t.Helper()
	req, _ := http.NewRequest("PATCH", c.Base+"/v1/admin/sites/"+site, strings.NewReader(`{"timezone":"`+zone+`"}`))
	req.Header.Set("Authorization", "Bearer "+apptest.AdminToken)
	req.Header.Set("Content-Type", "application/json")
	if code, body := c.Do(req); code != http.StatusOK {
		t.Fatalf("set time zone: %d %s", code, body)
	}
}

// insertHistory writes dashHistory and engHistory into the store the
// serve counts into. Ingest stamps every event with the server's receive
// time (a client's clock is not trusted) and the serve's clock also drives
// salts and the validators' windows, so views weeks old cannot come
// through the pixel: they go in as verdicts through the store's real
// insert path, which feeds the same materialized views. Their visit and
// engagement deltas, and the reports' own verdicts, are the validator's
// visit stage's (judge.Rules.Visit) over the rows in stream order, as a
// validator decides them. Partition 4000 is none the stream has, so no
// validator's progress check ever reads these rows.
func insertHistory(t *testing.T, m *apptest.Server, site string, dd dashDays) {
	t.Helper()
	var rows []viewcount.Verdict
	view := func(at time.Time, page, id string, visitor uint64, reason viewcount.Reason, src viewcount.Source) {
		rows = append(rows, viewcount.Verdict{
			Event: viewcount.Event{
				Time: at.UTC(), Site: site, Page: page, UA: apptest.FirefoxUA, ID: id,
				Visitor: visitor, Network: visitor, Source: src,
			},
			Reason: reason, Partition: 4000,
			Dims: viewcount.Dims{RefSource: "(direct)", Browser: "Firefox", OS: "Linux", Device: "desktop"},
		})
	}
	for i, v := range dashHistory {
		view(v.at(dd), v.page, "past"+strconv.Itoa(i), uint64(7000+i), v.reason, viewcount.SourcePixel)
	}
	for i, v := range engHistory {
		id := "eng" + strconv.Itoa(i)
		view(v.at(dd), v.page, id, uint64(8000+v.visitor), viewcount.Valid, viewcount.SourceBeacon)
		for _, r := range v.reports {
			rep := rows[len(rows)-1]
			rep.Time = rep.Time.Add(r.after)
			rep.Kind, rep.Reason = viewcount.KindEngagement, ""
			rep.Engagement = viewcount.Engagement{EngagedMS: uint32(r.engaged.Milliseconds()), Scroll: r.scroll, AgeMS: uint32(r.after.Milliseconds())}
			rows = append(rows, rep)
		}
	}
	slices.SortStableFunc(rows, func(a, b viewcount.Verdict) int { return a.Time.Compare(b.Time) })
	rules, err := judge.NewRules(judge.DefaultConfig(), everySite{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		rows[i].Seq = uint64(1 + i)
		rules.Visit(&rows[i])
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := storetest.InsertFed(ctx, m.Store, "dashboard-test-history", rows); err != nil {
		t.Fatalf("insert the history: %v", err)
	}
}

// everySite is the visit stage's site lookup: every site registered.
type everySite struct{}

func (everySite) Registered(string) (time.Time, bool) { return time.Time{}, true }

// dayViews are the valid views of both histories by local day.
func (dd dashDays) dayViews() map[string]int {
	out := map[string]int{}
	for _, v := range dashHistory {
		if v.reason == viewcount.Valid {
			out[v.at(dd).Format(time.DateOnly)]++
		}
	}
	for _, v := range engHistory {
		out[v.at(dd).Format(time.DateOnly)]++
	}
	return out
}

// series is what the chart's table must show for [from, to] (days relative
// to d0) in buckets of interval: every bucket's label, with the history's
// valid views in it (each view its own visitor, so uniques are the same).
func (dd dashDays) series(from, to int, interval string) [][]string {
	step, layout := time.Hour, "2006-01-02 15:04"
	switch interval {
	case "minute":
		step = time.Minute
	case "day":
		layout = time.DateOnly
	}
	views := map[string]int{}
	for _, v := range dashHistory {
		if v.reason == viewcount.Valid {
			views[v.at(dd).Truncate(step).Format(layout)]++ // dashZone's offset is whole hours
		}
	}
	var out [][]string
	end := dd.d0.AddDate(0, 0, to+1)
	for b := dd.d0.AddDate(0, 0, from); b.Before(end); {
		n := strconv.Itoa(views[b.Format(layout)])
		out = append(out, []string{b.Format(layout), n, n})
		if interval == "day" {
			b = b.AddDate(0, 0, 1)
		} else {
			b = b.Add(step)
		}
	}
	return out
}

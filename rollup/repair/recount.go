package repair

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/viewcount/viewcount/internal/feed"
	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
)

// Difference is one rollup row that does not equal its recount. Which
// fields a table fills depends on its rows: page_rollup's are a grain,
// site, page and bucket with views and uniques; dim_rollup's add the
// dimension and its value; page_views' are a site, page and UTC day
// (grain "day") with the number of views and a checksum of their rows
// instead of uniques; rejected_rollup's are a site, reason (Dim), user
// agent (Value), browser, device, AS number, page host and hour (grain
// "hour") with the events (as views) and the newest event's time instead
// of uniques; engagement_rollup's are a grain (hour or day), site,
// dimension, value and bucket with every figure of the row (Stored and
// RecountFigures) instead of views and uniques.
type Difference struct {
	Table          string `json:"table"`
	Grain          string `json:"grain"`
	Site           string `json:"site"`
	Dim            string `json:"dim"` // dim_rollup
	Page           string `json:"page"`
	Value          string `json:"value"` // dim_rollup
	Bucket         string `json:"bucket"`
	StoredViews    uint64 `json:"stored_views"`
	RecountViews   uint64 `json:"recount_views"`
	StoredUniques  uint64 `json:"stored_uniques"`
	RecountUniques uint64 `json:"recount_uniques"`
	// page_views: the sum (mod 2^64) of a hash of each row, so a row
	// altered, doubled or missing shows even where the count is equal.
	StoredChecksum  uint64 `json:"stored_checksum"`
	RecountChecksum uint64 `json:"recount_checksum"`
	// rejected_rollup: the rest of a row's key (Dim is its reason, Value
	// its user agent, Bucket its hour) and the receive time of its newest
	// event, which must agree too.
	Browser     string `json:"browser,omitempty"`
	Device      string `json:"device,omitempty"`
	ASN         uint32 `json:"asn,omitempty"`
	Origin      string `json:"origin,omitempty"`
	StoredLast  string `json:"stored_last,omitempty"`
	RecountLast string `json:"recount_last,omitempty"`
	// engagement_rollup: the row's figures as stored and as recounted.
	StoredFigures  *EngagementFigures `json:"stored_figures,omitempty"`
	RecountFigures *EngagementFigures `json:"recount_figures,omitempty"`
}

// EngagementFigures are the sums of one engagement_rollup row (migration
// 021): the engagement figures, the visit figures, the exits and the
// rejected reports. A histogram is its entries as ClickHouse prints a Map
// ("{3:2,11:1}": bucket index, views), without zero entries.
type EngagementFigures struct {
	Engagements int64  `json:"engagements"`
	EngagedMS   int64  `json:"engaged_ms"`
	EngagedHist string `json:"engaged_hist"`
	ScrollHist  string `json:"scroll_hist"`
	Visits      int64  `json:"visits"`
	Bounces     int64  `json:"bounces"`
	VisitMS     int64  `json:"visit_ms"`
	Exits       int64  `json:"exits"`
	Rejected    int64  `json:"rejected"`
}

// Differing names the figures that differ between f and g, in the
// order of EngagementFigures.
func (f EngagementFigures) Differing(g EngagementFigures) []string {
	var out []string
	add := func(name string, differ bool) {
		if differ {
			out = append(out, name)
		}
	}
	add("engagements", f.Engagements != g.Engagements)
	add("engaged_ms", f.EngagedMS != g.EngagedMS)
	add("engaged_hist", f.EngagedHist != g.EngagedHist)
	add("scroll_hist", f.ScrollHist != g.ScrollHist)
	add("visits", f.Visits != g.Visits)
	add("bounces", f.Bounces != g.Bounces)
	add("visit_ms", f.VisitMS != g.VisitMS)
	add("exits", f.Exits != g.Exits)
	add("rejected", f.Rejected != g.Rejected)
	return out
}

// RecountResult is one rollup's comparison with a recount from views_raw.
type RecountResult struct {
	Table     string       `json:"table"`
	Differing uint64       `json:"differing"` // rows that differ, in all
	Examples  []Difference `json:"examples"`  // the first of them, at most the limit asked for
}

// Recount compares every rollup (Rollups) with a recount from views_raw
// (read-only), listing at most limit differing rows of each. From the
// Cutoff on the recount is what Rebuild would write; before it the rows
// are their own truth (page_rollup's all-time rows must still equal the
// merge of the days before the cutoff and the recount after it).
func Recount(ctx context.Context, q Execer, now time.Time, limit int) ([]RecountResult, error) {
	return RecountRange(ctx, q, now, limit, time.Unix(0, 0), time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC), nil)
}

// RecountRange is Recount of the rows whose bucket (a minute, hour or day)
// starts in [from, to), and page_rollup's all-time rows.
//
// Rows a feed has not taken yet are in no rollup (nor in the recount): a
// check while validators run compares what both have seen. A feed that is
// recorded and still running has put its rows into some rollups and not
// yet into others, so the recount first waits for it (settledFeeds), and
// is redone when a feed ran while it read and it found a difference: a
// partly applied feed is not drift. note, when not nil, is told when the
// recount starts waiting for a feed and when it gives up on a stalled one:
// a command's progress lines.
func RecountRange(ctx context.Context, q Execer, now time.Time, limit int, from, to time.Time, note func(string)) ([]RecountResult, error) {
	cutoff, err := Cutoff(ctx, q, now)
	if err != nil {
		return nil, err
	}
	var out []RecountResult
	for attempt := 1; ; attempt++ {
		fed, err := settledFeeds(ctx, q, note)
		if err != nil {
			return nil, err
		}
		if out, err = recountFed(ctx, q, cutoff, limit, from, to, fed); err != nil {
			return nil, err
		}
		after, err := feed.FedThrough(ctx, q)
		if err != nil {
			return nil, err
		}
		if attempt == recountAttempts || !slices.ContainsFunc(out, func(r RecountResult) bool { return r.Differing > 0 }) || maps.Equal(fed, after) {
			return out, nil
		}
	}
}

// recountAttempts bounds how often RecountRange redoes a recount that
// feeds ran under: on a store that feeds without pause it reports what it
// found the last time.
const recountAttempts = 3

// Waiting for a recorded feed: how often its progress is read, and how long
// it may stay unchanged before the recount goes on without it (a feed a
// crash cut short stays recorded and not done until its validator starts
// again and redoes it; its rows are then really missing from some
// rollups). A feed takes about a second per 200k rows.
var (
	feedPoll  = 50 * time.Millisecond
	feedStall = 30 * time.Second
)

// settledFeeds returns how far each partition's feeds reached once no
// feed is running (Done equals Through everywhere), or once the feeds
// running made no progress for feedStall, telling note (if any) of either.
func settledFeeds(ctx context.Context, q Execer, note func(string)) (map[int]feed.Fed, error) {
	if note == nil {
		note = func(string) {}
	}
	var last map[int]feed.Fed
	var since time.Time
	for {
		fed, err := feed.FedThrough(ctx, q)
		if err != nil {
			return nil, err
		}
		running := false
		for _, f := range fed {
			running = running || f.Done < f.Through
		}
		if !running {
			return fed, nil
		}
		switch {
		case last == nil:
			note("waiting for the rollup feed in flight (" + inFlight(fed) + ") …")
			since = time.Now()
		case !maps.Equal(last, fed):
			since = time.Now()
		case time.Since(since) >= feedStall:
			note(fmt.Sprintf("the rollup feed in flight (%s) made no progress for %s (its validator stopped?): "+
				"recounting without waiting longer; its rows show as drift until a validator redoes it", inFlight(fed), feedStall))
			return fed, nil
		}
		last = fed
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("recount: waiting for the feed in flight: %w", ctx.Err())
		case <-time.After(feedPoll):
		}
	}
}

// inFlight names the feeds recorded and not done: "partition 0, batches
// 120-180".
func inFlight(fed map[int]feed.Fed) string {
	var parts []string
	for p, f := range fed {
		if f.Done < f.Through {
			parts = append(parts, fmt.Sprintf("partition %d, batches %d-%d", p, f.Done+1, f.Through))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

// recountFed compares every rollup with a recount of the rows the feeds
// reached (fed's Through).
func recountFed(ctx context.Context, q Execer, cutoff time.Time, limit int, from, to time.Time, fed map[int]feed.Fed) ([]RecountResult, error) {
	through := make(map[int]feed.Range, len(fed))
	for p, f := range fed {
		through[p] = feed.Range{Partition: p, Last: f.Through}
	}
	limit = max(limit, 0)
	var out []RecountResult
	for _, table := range Rollups() {
		// At least one row, which carries the count of all differing ones.
		p := store.Params{"cutoff": cutoffParam(cutoff), "limit": strconv.Itoa(max(limit, 1)), "fed": feed.FedMap(through),
			"from": cutoffParam(from), "to": cutoffParam(to)}
		months := []string{""}
		if recountByMonth(table) {
			res, err := q.Query(ctx, queries.Repair(table + "_months")[0], p)
			if err != nil {
				return nil, fmt.Errorf("recount %s: list months: %w", table, err)
			}
			months = months[:0]
			for res.Next() {
				months = append(months, res.Text("month")) // a parameter's text, as printed
			}
			if err := res.Err(); err != nil {
				return nil, fmt.Errorf("recount %s: list months: %w", table, err)
			}
		}
		all := RecountResult{Table: table, Examples: []Difference{}}
		for _, m := range months {
			if m != "" {
				p["month"] = m
			}
			res, err := q.Query(ctx, queries.Repair(table + "_recount")[0], p)
			if err != nil {
				return nil, fmt.Errorf("recount %s: %w", table, err)
			}
			r, err := differences(table, res)
			if err != nil {
				return nil, err
			}
			all.Differing += r.Differing
			all.Examples = append(all.Examples, r.Examples[:min(len(r.Examples), limit-len(all.Examples))]...)
		}
		out = append(out, all)
	}
	return out, nil
}

// recountByMonth reports whether table's recount runs a month at a time
// (NAME_months lists them, NAME_recount takes {month}): dim_rollup's, whose
// every row lies in one UTC day and whose recount of all months at once
// held 3.8 GB on a million events (BenchmarkRecountRebuild),
// rejected_rollup's, whose keys (user agents) can be as many as its
// events, and engagement_rollup's, which fans a row out as dim_rollup's
// view does.
func recountByMonth(table string) bool {
	return table == migrations.DimRollupTable || table == migrations.RejectedRollupTable ||
		table == migrations.EngagementRollupTable
}

// differences reads a recount script's rows by column name: each table's
// script returns the columns its rows have (see Difference) and
// "differing", the count of all differing rows.
func differences(table string, res *store.Result) (RecountResult, error) {
	r := RecountResult{Table: table, Examples: []Difference{}}
	if !res.Has("differing") && res.Len() > 0 {
		return r, fmt.Errorf("recount %s: no column differing in %v", table, res.Columns)
	}
	for res.Next() {
		// A table's script returns only the columns its rows have.
		text := func(name string) string {
			if res.Has(name) {
				return res.Text(name)
			}
			return ""
		}
		n := func(name string) uint64 {
			if res.Has(name) {
				return res.Uint64(name)
			}
			return 0
		}
		n32 := func(name string) uint32 {
			if res.Has(name) {
				return res.Uint32(name)
			}
			return 0
		}
		// engagement_rollup's figures, stored_NAME and recount_NAME.
		figures := func(side string) *EngagementFigures {
			if !res.Has(side + "_engagements") {
				return nil
			}
			i := func(name string) int64 { return res.Int64(side + "_" + name) }
			return &EngagementFigures{Engagements: i("engagements"), EngagedMS: i("engaged_ms"),
				EngagedHist: res.String(side + "_engaged_hist"), ScrollHist: res.String(side + "_scroll_hist"),
				Visits: i("visits"), Bounces: i("bounces"), VisitMS: i("visit_ms"), Exits: i("exits"), Rejected: i("rejected")}
		}
		r.Differing = n("differing")
		r.Examples = append(r.Examples, Difference{Table: table, Grain: text("grain"), Site: text("site"), Dim: text("dim"),
			Page: text("page"), Value: text("value"), Bucket: text("bucket"),
			StoredViews: n("stored_views"), RecountViews: n("recount_views"),
			StoredUniques: n("stored_uniques"), RecountUniques: n("recount_uniques"),
			StoredChecksum: n("stored_checksum"), RecountChecksum: n("recount_checksum"),
			Browser: text("browser"), Device: text("device"), ASN: n32("asn"), Origin: text("origin"),
			StoredLast: text("stored_last"), RecountLast: text("recount_last"),
			StoredFigures: figures("stored"), RecountFigures: figures("recount")})
	}
	if err := res.Err(); err != nil {
		return r, fmt.Errorf("recount %s: %w", table, err)
	}
	return r, nil
}

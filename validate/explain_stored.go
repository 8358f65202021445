package validate

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/validate/judge"
)

// StoredExplanation explains one stored event: its verdict as stored and
// the rule set that gave it, what the rules in force now decide (the
// Explanation), and what views_raw holds of the views before it for the
// rules that depend on them.
type StoredExplanation struct {
	Event             EventFacts       `json:"event"`
	Stored            viewcount.Reason `json:"stored_verdict"`
	StoredRules       string           `json:"stored_rules"`
	judge.Explanation                  // the rules in force now
	History           History          `json:"history"`
	StoredIsOlder     bool             `json:"stored_by_other_rules"` // the stored verdict came from another rule set than Rules
}

// EventFacts are the stored event's fields an operator reads first.
type EventFacts struct {
	Time      time.Time `json:"time"`
	Site      string    `json:"site"`
	Page      string    `json:"page"`
	ID        string    `json:"id"`
	UA        string    `json:"user_agent"`
	Referrer  string    `json:"referrer"`
	Source    string    `json:"source"`
	ASN       uint32    `json:"asn"`
	Country   string    `json:"country"`
	Partition int       `json:"partition"`
	Seq       uint64    `json:"seq"`
}

// History is what views_raw holds of the views before an event that the
// stateful rules read, counted on its site (rate and rotation count a
// network's views on every site, so theirs can be higher).
type History struct {
	EarlierSameID  int        `json:"earlier_same_id"`
	VisitorViews   int        `json:"visitor_views_in_rate_window"`
	NetworkViews   int        `json:"network_views_in_rate_window"`
	NetworkUAs     int        `json:"network_user_agents_in_rotation_window"`
	EarlierPage    int        `json:"earlier_views_of_page_in_duplicate_window"`
	LastPageViewAt *time.Time `json:"last_view_of_page,omitempty"`
}

// ExplainStored explains the stored events of site with event id (more
// than one when a retry was stored again), oldest first; none when there
// is no such event. r must be the rules in force, with their corrections.
func ExplainStored(ctx context.Context, q RawStore, r *judge.Rules, site, id string) ([]StoredExplanation, error) {
	res, err := q.Query(ctx, queries.Text(queries.ExplainEvent), store.Params{"site": site, "id": id})
	if err != nil {
		return nil, fmt.Errorf("validate: explain %s %s: %w", site, id, err)
	}
	out := make([]StoredExplanation, 0, res.Len())
	for res.Next() {
		e := rawEvent(res)
		seq, idx, part := res.Uint64("seq"), uint64(res.Uint32("idx")), res.Int("partition")
		if err := res.Err(); err != nil {
			return nil, fmt.Errorf("validate: explain %s %s: %w", site, id, err)
		}
		x := StoredExplanation{
			Event: EventFacts{Time: e.Time, Site: e.Site, Page: e.Page, ID: e.ID, UA: e.UA, Referrer: e.Referrer,
				Source: e.Source.String(), ASN: e.ASN, Country: e.Country, Partition: part, Seq: seq},
			Stored: viewcount.Reason(res.String("toString(verdict)")), StoredRules: res.String("rules"), Explanation: r.Explain(&e),
		}
		x.StoredIsOlder = x.StoredRules != "" && x.StoredRules != x.Rules
		if x.History, err = history(ctx, q, r.Config(), &e, part, seq, idx); err != nil {
			return nil, err
		}
		x.Steps = x.withHistory()
		out = append(out, x)
	}
	return out, nil
}

func history(ctx context.Context, q RawStore, c judge.Config, e *viewcount.Event, part int, seq, idx uint64) (History, error) {
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
	res, err := q.Query(ctx, queries.Text(queries.ExplainHistory), store.Params{
		"site": e.Site, "id": e.ID, "visitor": strconv.FormatUint(e.Visitor, 10), "network": strconv.FormatUint(e.Network, 10),
		"page": e.Page, "at": strconv.FormatInt(e.Time.UnixMilli(), 10), "partition": strconv.Itoa(part),
		"seq": strconv.FormatUint(seq, 10), "idx": strconv.FormatUint(idx, 10),
		"w_retry": ms(c.RetryWindow), "w_rate": ms(c.RateWindow), "w_rotation": ms(c.RotationWindow), "w_dup": ms(c.DuplicateWindow)})
	if err != nil {
		return History{}, fmt.Errorf("validate: explain %s %s: history: %w", e.Site, e.ID, err)
	}
	rows, err := store.ScanAll[queries.ExplainHistoryRow](res)
	if err != nil || len(rows) != 1 {
		return History{}, fmt.Errorf("validate: explain %s %s: history: want one row of 6 columns: %d rows, %v", e.Site, e.ID, len(rows), err)
	}
	row := rows[0]
	h := History{EarlierSameID: int(row.EarlierSameID), VisitorViews: int(row.VisitorViews), NetworkViews: int(row.NetworkViews),
		NetworkUAs: int(row.NetworkUAs), EarlierPage: int(row.EarlierPage)}
	if row.LastPageViewMs > 0 {
		at := time.UnixMilli(row.LastPageViewMs).UTC()
		h.LastPageViewAt = &at
	}
	return h, nil
}

// withHistory fills the stateful rules' steps with what views_raw holds
// and the stored verdict: the rules in force cannot re-judge them one view
// at a time, the stored verdict says what the validator decided, and the
// history why.
func (x *StoredExplanation) withHistory() []judge.Step {
	h := x.History
	steps := make([]judge.Step, len(x.Steps))
	copy(steps, x.Steps)
	for i, s := range steps {
		if s.Decision != judge.Stateful {
			continue
		}
		var seen string
		switch s.Rule {
		case viewcount.DuplicateID:
			seen = fmt.Sprintf("%d earlier event(s) with this id in the window", h.EarlierSameID)
		case viewcount.Rate:
			seen = fmt.Sprintf("%d earlier view(s) by this visitor and %d by its network in the window", h.VisitorViews, h.NetworkViews)
		case viewcount.NetworkRotation:
			seen = fmt.Sprintf("%d distinct user agent(s) from its network in the window", h.NetworkUAs)
		case viewcount.Duplicate:
			seen = fmt.Sprintf("%d earlier view(s) of this page by this visitor in the window", h.EarlierPage)
			if h.LastPageViewAt != nil {
				seen += ", the last at " + h.LastPageViewAt.Format(time.RFC3339Nano)
			}
		}
		steps[i].Evidence = s.Evidence + "; views_raw holds " + seen
		if x.Stored == s.Rule {
			steps[i].Decision = judge.Rejects
			steps[i].Evidence += " (the stored verdict)"
		}
	}
	return steps
}

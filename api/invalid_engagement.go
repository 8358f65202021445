package api

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
)

// The engagement outliers' floor and length (docs/invalid-traffic.md,
// "Engagement by network, referrer and browser"): a value with fewer views
// says nothing about its share, and a list longer than this is no
// longer read.
const (
	defaultOutlierMinViews = 100
	maxOutlierMinViews     = 1_000_000_000
	outlierLimit           = 10
)

// engagementOutliers is the report's engagement section: per AS number,
// referrer host and browser, the values whose share of engaged views lies
// below the site's, ranked by the engaged views they lack against it.
// It judges nothing: a verdict changes only by a correction.
type engagementOutliers struct {
	EngagedAfter int     `json:"engaged_after"` // seconds: the site's threshold of an engaged view
	MinViews     uint64  `json:"min_views"`     // the floor: a value with fewer views is not listed
	Views        uint64  `json:"views"`         // the site's valid views in the range
	EngagedViews uint64  `json:"engaged_views"` // of them engaged
	EngagedShare float64 `json:"engaged_share"` // engaged_views / views, 0 without views
	// ByASN, ByReferrer and ByBrowser list at most 10 values each, the
	// most engaged views missing first.
	ByASN      []engagementOutlier `json:"by_asn"`
	ByReferrer []engagementOutlier `json:"by_referrer"`
	ByBrowser  []engagementOutlier `json:"by_browser"`
}

type engagementOutlier struct {
	Value            string  `json:"value"` // the AS number, the referrer host or the browser
	Views            uint64  `json:"views"`
	EngagedViews     uint64  `json:"engaged_views"`
	EngagedShare     float64 `json:"engaged_share"`
	SiteEngagedShare float64 `json:"site_engaged_share"`
	// MissingEngaged is views × the site's share − engaged views, rounded:
	// the ranking.
	MissingEngaged int64 `json:"missing_engaged_views"`
	// Exclude is the correction that would exclude the value's views
	// (docs/fixing-the-past.md); none for a browser, which no correction
	// names.
	Exclude *exclusion `json:"exclude,omitempty"`
}

type exclusion struct {
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

// outlierMinViews parses the report's min_views (default 100).
func outlierMinViews(v string) (uint64, error) {
	if v == "" {
		return defaultOutlierMinViews, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n < 1 || n > maxOutlierMinViews {
		return 0, fmt.Errorf("min_views: want a number of views from 1 to %d", maxOutlierMinViews)
	}
	return n, nil
}

// engagementOutliers reads the section for site over [from, to) (whole
// UTC hours) from dim_rollup and engagement_rollup, engaged views by the
// site's engaged_after.
func (s *Server) engagementOutliers(ctx context.Context, site string, from, to time.Time, minViews uint64) (*engagementOutliers, error) {
	st, err := s.sites.Get(ctx, site)
	if err != nil {
		return nil, fmt.Errorf("api: invalid report %s: engagement: %w", site, err)
	}
	after := st.Engaged()
	// Whole UTC days from the day rows, the hours around them from the
	// hour rows; a range within one day reads hours only.
	dfrom, dto := from.Add(24*time.Hour-time.Nanosecond).Truncate(24*time.Hour), to.Truncate(24*time.Hour)
	if !dfrom.Before(dto) {
		dfrom, dto = from, from
	}
	const layout = "2006-01-02 15:04:05"
	res, err := s.q.Query(ctx, queries.Text(queries.InvalidEngagement), store.Params{
		"site": site, "from": from.Format(layout), "to": to.Format(layout), "dfrom": dfrom.Format(layout), "dto": dto.Format(layout),
		"bucket":    strconv.Itoa(int(viewcount.EngagedBucket(uint32(after.Milliseconds())))),
		"min_views": strconv.FormatUint(minViews, 10), "limit": strconv.Itoa(outlierLimit)})
	if err != nil {
		return nil, fmt.Errorf("api: invalid report %s: engagement: %w", site, err)
	}
	rows, err := store.ScanAll[queries.InvalidEngagementRow](res)
	if err != nil {
		return nil, fmt.Errorf("api: invalid report %s: engagement: %w", site, err)
	}
	out := &engagementOutliers{EngagedAfter: int(after / time.Second), MinViews: minViews,
		ByASN: []engagementOutlier{}, ByReferrer: []engagementOutlier{}, ByBrowser: []engagementOutlier{}}
	share := func(engaged, views uint64) float64 {
		if views == 0 {
			return 0
		}
		return float64(engaged) / float64(views)
	}
	for _, r := range rows {
		if r.Dim == "total" {
			out.Views, out.EngagedViews, out.EngagedShare = r.Views, r.Engaged, share(r.Engaged, r.Views)
			continue
		}
		o := engagementOutlier{Value: r.Value, Views: r.Views, EngagedViews: r.Engaged, EngagedShare: share(r.Engaged, r.Views),
			SiteEngagedShare: share(r.SiteEngaged, r.SiteViews), MissingEngaged: r.Missing}
		switch r.Dim {
		case "asn":
			o.Exclude = &exclusion{Kind: viewcount.KindASN, Value: r.Value}
			out.ByASN = append(out.ByASN, o)
		case "referrer":
			o.Exclude = &exclusion{Kind: viewcount.KindReferrer, Value: r.Value}
			out.ByReferrer = append(out.ByReferrer, o)
		case "browser":
			out.ByBrowser = append(out.ByBrowser, o)
		}
	}
	return out, nil
}

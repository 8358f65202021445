package api

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
)

// The report covers at most a year; longer audits belong in SQL.
const maxReportDays = 366

// reasonCounts is events by verdict.
type reasonCounts map[string]uint64

type invalidDay struct {
	Day      string       `json:"day"`
	Valid    uint64       `json:"valid"`
	Rejected uint64       `json:"rejected"`
	ByReason reasonCounts `json:"by_reason"`
}

type invalidReport struct {
	Site     string       `json:"site"`
	From     string       `json:"from"`
	To       string       `json:"to"`
	Valid    uint64       `json:"valid"`
	Rejected uint64       `json:"rejected"`
	ByReason reasonCounts `json:"by_reason"`
	Days     []invalidDay `json:"days"`
	// DatacenterASNs are the networks the datacenter views came from, most
	// first (the top 20): AS number 0 is unknown (a --datacenter-ranges
	// match without AS-number data, or a view from before it was kept).
	DatacenterASNs []asnCount `json:"datacenter_by_asn"`
	// TopUserAgents and TopClasses are, per reason, the user agents (the
	// top 10) and the browser and device classes (the top 5) with the most
	// rejected events, most first: a false positive such as an in-app
	// browser rejected as bot_ua stands out there.
	TopUserAgents map[string][]agentCount `json:"top_user_agents"`
	TopClasses    map[string][]classCount `json:"top_classes"`
	// ForeignOrigins are the page hosts the foreign_origin views came
	// from, most first (the top 20): another site's pages, or a host of
	// the site's own its hostnames leave out.
	ForeignOrigins []hostCount `json:"foreign_origin_by_host"`
	// EngagementOutliers are the AS numbers, referrer hosts and browsers
	// whose valid views were engaged far less often than the site's
	// (invalid_engagement.go): evidence for a correction, never a verdict.
	EngagementOutliers *engagementOutliers `json:"engagement_outliers"`
}

type hostCount struct {
	Host   string `json:"host"`
	Events uint64 `json:"events"`
}

type asnCount struct {
	ASN    uint32 `json:"asn"`
	Events uint64 `json:"events"`
}

// invalid answers GET /v1/sites/{site}/invalid?from=&to=&min_views=: rejected events by
// reason, in total and per UTC day, with the valid count beside them, the
// networks (AS numbers) the datacenter views came from, the page hosts
// the foreign_origin views came from, and per reason the user agents and
// browser and device classes rejected most, and the AS numbers, referrer
// hosts and browsers with at least min_views valid views (default 100)
// engaged less often than the site's views. from and to are dates
// (YYYY-MM-DD, both included) or RFC 3339 times, widened to whole UTC
// hours (the rollups' grain: every number is read from dim_rollup,
// rejected_rollup and engagement_rollup, never from views_raw); the default is the last 30
// days. It needs the site's token, its share token or the admin's.
func (s *Server) invalid(c *gin.Context) {
	site, ok := s.ReadAuth(c)
	if !ok {
		return
	}
	from, to, err := reportRange(c.Query("from"), c.Query("to"), s.now().UTC())
	if err != nil {
		s.fail(c, errBadRequest(err.Error()))
		return
	}
	minViews, err := outlierMinViews(c.Query("min_views"))
	if err != nil {
		s.fail(c, errBadRequest(err.Error()))
		return
	}
	rep, err := s.invalidReport(c.Request.Context(), site, from, to, minViews)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("Cache-Control", "private, max-age=60")
	c.JSON(http.StatusOK, rep)
}

func (s *Server) invalidReport(ctx context.Context, site string, from, to time.Time, minViews uint64) (*invalidReport, error) {
	const layout = "2006-01-02 15:04:05.000"
	res, err := s.q.Query(ctx, queries.Text(queries.InvalidByDay), store.Params{
		"site": site, "from": from.Format(layout), "to": to.Format(layout)})
	if err != nil {
		return nil, fmt.Errorf("api: invalid report %s: %w", site, err)
	}
	rep := &invalidReport{Site: site, From: from.Format(time.RFC3339), To: to.Format(time.RFC3339),
		ByReason: reasonCounts{}, Days: []invalidDay{}, DatacenterASNs: []asnCount{},
		TopUserAgents: map[string][]agentCount{}, TopClasses: map[string][]classCount{}}
	rows, err := store.ScanAll[queries.InvalidByDayRow](res)
	if err != nil {
		return nil, fmt.Errorf("api: invalid report: %w", err)
	}
	for _, row := range rows {
		n := row.Events
		if len(rep.Days) == 0 || rep.Days[len(rep.Days)-1].Day != row.Day {
			rep.Days = append(rep.Days, invalidDay{Day: row.Day, ByReason: reasonCounts{}})
		}
		d := &rep.Days[len(rep.Days)-1]
		if row.Verdict == string(viewcount.Valid) {
			d.Valid += n
			rep.Valid += n
			continue
		}
		d.Rejected += n
		d.ByReason[row.Verdict] += n
		rep.Rejected += n
		rep.ByReason[row.Verdict] += n
	}
	rep.ForeignOrigins = []hostCount{}
	if rep.EngagementOutliers, err = s.engagementOutliers(ctx, site, from, to, minViews); err != nil {
		return nil, err
	}
	if rep.Rejected == 0 {
		return rep, nil
	}
	if err := s.topRejected(ctx, rep, store.Params{"site": site, "from": from.Format(layout), "to": to.Format(layout)}); err != nil {
		return nil, err
	}
	if rep.ByReason[string(viewcount.ForeignOrigin)] > 0 {
		res, err := s.q.Query(ctx, queries.Text(queries.InvalidOrigins), store.Params{
			"site": site, "from": from.Format(layout), "to": to.Format(layout)})
		if err != nil {
			return nil, fmt.Errorf("api: invalid report %s: foreign hosts: %w", site, err)
		}
		for res.Next() {
			rep.ForeignOrigins = append(rep.ForeignOrigins, hostCount{Host: res.String("origin"), Events: res.Uint64("events")})
		}
		if err := res.Err(); err != nil {
			return nil, fmt.Errorf("api: invalid report: foreign hosts: %w", err)
		}
	}
	if rep.ByReason[string(viewcount.Datacenter)] == 0 {
		return rep, nil
	}
	res, err = s.q.Query(ctx, queries.Text(queries.InvalidASNs), store.Params{
		"site": site, "from": from.Format(layout), "to": to.Format(layout)})
	if err != nil {
		return nil, fmt.Errorf("api: invalid report %s: datacenter networks: %w", site, err)
	}
	for res.Next() {
		rep.DatacenterASNs = append(rep.DatacenterASNs, asnCount{ASN: res.Uint32("asn"), Events: res.Uint64("events")})
	}
	if err := res.Err(); err != nil {
		return nil, fmt.Errorf("api: invalid report: datacenter networks: %w", err)
	}
	return rep, nil
}

// reportEpoch is the earliest time a report covers: no view is older, and
// the store's DateTime64 holds only 1900 to 2299 (beyond, ClickHouse clamps
// silently or fails, which a client would see as an empty report or a 503).
var reportEpoch = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)

// reportRange parses the from/to of a report into [from, to), widened to
// whole UTC hours: the rollups the report reads count hours, so a range
// that starts or ends within one covers all of it (and says so in the
// report's from and to). A range the report cannot serve is the client's
// mistake, answered 400, never a store error: from must lie between 1970
// and the end of tomorrow (UTC, so every time zone's today is in), to
// after from and at most maxReportDays later (before the widening).
func reportRange(fromS, toS string, now time.Time) (from, to time.Time, err error) {
	parse := func(name, v string, end bool) (time.Time, error) {
		if t, err := time.Parse(time.DateOnly, v); err == nil {
			if end {
				t = t.AddDate(0, 0, 1) // a date includes its whole day
			}
			return t, nil
		}
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return time.Time{}, fmt.Errorf("%s: want YYYY-MM-DD or an RFC 3339 time", name)
		}
		return t.UTC(), nil
	}
	to = now.Truncate(24*time.Hour).AddDate(0, 0, 1)
	if toS != "" {
		if to, err = parse("to", toS, true); err != nil {
			return
		}
	}
	from = to.AddDate(0, 0, -30)
	if fromS != "" {
		if from, err = parse("from", fromS, false); err != nil {
			return
		}
	}
	latest := now.Truncate(24*time.Hour).AddDate(0, 0, 2)
	const day = "2006-01-02"
	switch {
	case !to.After(reportEpoch) || to.After(latest.AddDate(0, 0, maxReportDays)):
		err = fmt.Errorf("to: must be between %s and %s", reportEpoch.Format(day), latest.AddDate(0, 0, maxReportDays-1).Format(day))
	case from.Before(reportEpoch):
		err = fmt.Errorf("from: must not be before %s", reportEpoch.Format(day))
	case !from.Before(latest) && fromS == "":
		err = fmt.Errorf("from (30 days before to by default) is in the future: give from")
	case !from.Before(latest):
		err = fmt.Errorf("from: in the future (at most %s)", latest.AddDate(0, 0, -1).Format(day))
	case !from.Before(to):
		err = fmt.Errorf("from must be before to")
	case to.Sub(from) > maxReportDays*24*time.Hour:
		err = fmt.Errorf("at most %d days per report", maxReportDays)
	}
	if err == nil {
		from, to = from.Truncate(time.Hour), to.Add(time.Hour-time.Nanosecond).Truncate(time.Hour)
	}
	return
}

package api

import (
	"context"
	"fmt"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"strconv"
	"unicode/utf8"
)

// The report's top lists are bounded per reason: a false positive shows in
// the first few rows, and the answer stays small whatever the traffic.
const (
	topAgentsPerReason  = 10
	topClassesPerReason = 5
	// maxReportUA is how much of a user agent the report shows: enough to
	// tell agents apart and to write a --bot-list pattern. Stored agents are
	// up to 512 bytes (ingest's cap), every one of them chosen by a client;
	// rejected_rollup keeps this much of each (migration 019 cuts them in
	// SQL the way capUA does).
	maxReportUA = 300
)

// agentCount is one user agent's rejected events under one reason.
type agentCount struct {
	UA string `json:"ua"`
	// Truncated says UA is the first maxReportUA bytes (on a character
	// boundary) of a longer agent.
	Truncated bool   `json:"truncated"`
	Browser   string `json:"browser"` // as the validator classified it; "" = unknown
	Device    string `json:"device"`
	Events    uint64 `json:"events"`
}

// classCount is one browser and device class's rejected events under one
// reason.
type classCount struct {
	Browser string `json:"browser"`
	Device  string `json:"device"`
	Events  uint64 `json:"events"`
}

// topRejected fills the report's top user agents and classes per reason.
func (s *Server) topRejected(ctx context.Context, rep *invalidReport, p store.Params) error {
	p["limit"] = strconv.Itoa(topAgentsPerReason)
	res, err := s.q.Query(ctx, queries.Text(queries.InvalidTopAgents), p)
	if err != nil {
		return fmt.Errorf("api: invalid report %s: top user agents: %w", rep.Site, err)
	}
	for res.Next() {
		// The rollup keeps maxReportUA bytes already (ua_cut: it cut
		// them); capUA holds the answer to its bound whatever the store.
		ua, cut := capUA(res.String("ua"))
		cut = cut || res.Uint64("ua_cut") == 1
		a := agentCount{UA: ua, Truncated: cut, Browser: res.String("ua_browser"), Device: res.String("ua_device"), Events: res.Uint64("events")}
		reason := res.String("verdict")
		rep.TopUserAgents[reason] = append(rep.TopUserAgents[reason], a)
	}
	if err := res.Err(); err != nil {
		return fmt.Errorf("api: invalid report %s: top user agents: %w", rep.Site, err)
	}

	p["limit"] = strconv.Itoa(topClassesPerReason)
	if res, err = s.q.Query(ctx, queries.Text(queries.InvalidTopClasses), p); err != nil {
		return fmt.Errorf("api: invalid report %s: top classes: %w", rep.Site, err)
	}
	for res.Next() {
		k := classCount{Browser: res.String("browser"), Device: res.String("device"), Events: res.Uint64("events")}
		reason := res.String("verdict")
		rep.TopClasses[reason] = append(rep.TopClasses[reason], k)
	}
	if err := res.Err(); err != nil {
		return fmt.Errorf("api: invalid report %s: top classes: %w", rep.Site, err)
	}
	return nil
}

// capUA cuts ua to at most maxReportUA bytes, on a character boundary, and
// says whether it did.
func capUA(ua string) (string, bool) {
	if len(ua) <= maxReportUA {
		return ua, false
	}
	n := maxReportUA
	for n > 0 && !utf8.RuneStart(ua[n]) {
		n--
	}
	return ua[:n], true
}

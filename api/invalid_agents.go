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
	c := columnsOf(res, "verdict", "ua", "ua_cut", "ua_browser", "ua_device", "events")
	for _, row := range res.TextRows() {
		// The rollup keeps maxReportUA bytes already (ua_cut: it cut
		// them); capUA holds the answer to its bound whatever the store.
		ua, cut := capUA(c.text(row, "ua"))
		cut = cut || c.uint(row, "ua_cut") == 1
		a := agentCount{UA: ua, Truncated: cut, Browser: c.text(row, "ua_browser"), Device: c.text(row, "ua_device"), Events: c.uint(row, "events")}
		reason := c.text(row, "verdict")
		rep.TopUserAgents[reason] = append(rep.TopUserAgents[reason], a)
	}
	if c.err != nil {
		return fmt.Errorf("api: invalid report %s: top user agents: %w", rep.Site, c.err)
	}

	p["limit"] = strconv.Itoa(topClassesPerReason)
	if res, err = s.q.Query(ctx, queries.Text(queries.InvalidTopClasses), p); err != nil {
		return fmt.Errorf("api: invalid report %s: top classes: %w", rep.Site, err)
	}
	c = columnsOf(res, "verdict", "browser", "device", "events")
	for _, row := range res.TextRows() {
		k := classCount{Browser: c.text(row, "browser"), Device: c.text(row, "device"), Events: c.uint(row, "events")}
		reason := c.text(row, "verdict")
		rep.TopClasses[reason] = append(rep.TopClasses[reason], k)
	}
	if c.err != nil {
		return fmt.Errorf("api: invalid report %s: top classes: %w", rep.Site, c.err)
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

// columns reads a result's cells by column name, so a query that gains or
// reorders columns is still read right. The first problem (a column
// missing, a short row, a number that does not parse) is kept in err and
// the cells read after it are zero: a caller checks err once, after the
// rows, and never takes a parse error for a zero.
type columns struct {
	at  map[string]int
	err error
}

func columnsOf(res *store.Result, names ...string) *columns {
	c := &columns{at: make(map[string]int, len(res.Columns))}
	for i, name := range res.Columns {
		c.at[name] = i
	}
	for _, name := range names {
		if _, ok := c.at[name]; !ok && c.err == nil {
			c.err = fmt.Errorf("column %s missing (got %q)", name, res.Columns)
		}
	}
	return c
}

func (c *columns) text(row []string, name string) string {
	if c.err != nil {
		return ""
	}
	i, ok := c.at[name]
	if !ok || i >= len(row) {
		c.err = fmt.Errorf("column %s missing in a row of %d cells", name, len(row))
		return ""
	}
	return row[i]
}

func (c *columns) uint(row []string, name string) uint64 {
	s := c.text(row, name)
	if c.err != nil {
		return 0
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		c.err = fmt.Errorf("column %s: %w", name, err)
	}
	return n
}

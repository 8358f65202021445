package stats

import (
	"encoding/csv"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/viewcount/viewcount/sql/store"
)

// dims maps the breakdown's by= names to dim_rollup's dim values.
var dims = map[string]string{
	"page": "page", "source": "source", "referrer": "referrer",
	"utm_source": "utm_source", "utm_medium": "utm_medium", "utm_campaign": "utm_campaign",
	"browser": "browser", "os": "os", "device": "device", "country": "country", "screen": "screen",
}

// pageColumns are the dimensions a page is broken down by and their
// columns in page_views (migration 011; see
// queries/stats_breakdown_page.sql): every one but page, whose breakdown
// of one page is that page's row of the site's.
var pageColumns = map[string]string{
	"source": "ref_source", "referrer": "ref_host", "utm_source": "utm_source", "utm_medium": "utm_medium",
	"utm_campaign": "utm_campaign", "browser": "browser", "os": "os", "device": "device", "country": "country", "screen": "screen",
}

const byNames = "page, source, referrer, utm_source, utm_medium, utm_campaign, browser, os, device, country, screen"

// unknown is how a value the store holds as ” (not known, or written
// before the dimension existed) is reported.
const unknown = "(unknown)"

type rowJSON struct {
	Value   string `json:"value"`
	Views   uint64 `json:"views"`
	Uniques uint64 `json:"uniques"`
}

type breakdownJSON struct {
	meta
	By           string    `json:"by"`
	UniquesError float64   `json:"uniques_error"`
	Rows         []rowJSON `json:"rows"`
	TotalValues  uint64    `json:"total_values"`
	Limit        int       `json:"limit"`
	Offset       int       `json:"offset"`
}

// intParam reads a non-negative integer parameter up to hi, def when absent.
func intParam(req *request, name string, def, lo, hi int) (int, error) {
	v := req.get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, badParam(name, "want a whole number from %d to %d", lo, hi)
	}
	return n, nil
}

func (a *API) breakdown(req *request) (*answer, error) {
	by := req.get("by")
	dim, ok := dims[by]
	if !ok {
		return nil, badParam("by", "want one of %s", byNames)
	}
	limit, err := intParam(req, "limit", 10, 1, 1000)
	if err != nil {
		return nil, err
	}
	offset, err := intParam(req, "offset", 0, 0, 1_000_000)
	if err != nil {
		return nil, err
	}
	from, to, err := parseRange(req, maxDayRange)
	if err != nil {
		return nil, err
	}
	s := hourSpan(from, to)
	if column, ok := pageColumns[by]; ok && req.page != "" {
		return a.pageBreakdown(req, by, column, s, limit, offset)
	}
	p := s.liveParams(req.site, req.now)
	p["dim"], p["page"], p["value"] = dim, req.page, ""
	p["limit"], p["offset"] = strconv.Itoa(limit), strconv.Itoa(offset)
	if by == "page" && req.page != "" {
		// The pages of one page: its own row of the all-pages breakdown.
		p["page"], p["value"] = "", req.page
	}
	rows, err := a.query(req.ctx, qBreakdown, p, 3)
	if err != nil {
		return nil, err
	}
	uniques := map[string]uint64{}
	if len(rows) > 0 {
		values := make([]string, len(rows))
		for i, r := range rows {
			values[i] = r[0]
		}
		p["values"] = store.ArrayParam(values)
		urows, err := a.query(req.ctx, qBreakdownUniq, p, 2)
		if err != nil {
			return nil, err
		}
		for _, r := range urows {
			n, err := uints(qBreakdownUniq, r[1])
			if err != nil {
				return nil, err
			}
			uniques[r[0]] = n[0]
		}
	}
	out := breakdownJSON{meta: req.meta(s), By: by, Rows: make([]rowJSON, 0, len(rows)), Limit: limit, Offset: offset}
	ans := &answer{header: []string{by, "views", "uniques"}, end: s.to}
	for _, r := range rows {
		n, err := uints(qBreakdown, r[1:]...)
		if err != nil {
			return nil, err
		}
		u := uniques[r[0]]
		v := r[0]
		if v == "" {
			v = unknown
		}
		out.Rows = append(out.Rows, rowJSON{Value: v, Views: n[0], Uniques: u})
		out.TotalValues = n[1]
		out.UniquesError = max(out.UniquesError, dimSketch.uniquesError(u))
		ans.rows = append(ans.rows, []string{v, strconv.FormatUint(n[0], 10), strconv.FormatUint(u, 10)})
	}
	if len(rows) == 0 && offset > 0 {
		// Past the last value: count them for the client's pager.
		p["offset"] = "0"
		p["limit"] = "1"
		if rows, err = a.query(req.ctx, qBreakdown, p, 3); err != nil {
			return nil, err
		}
		if len(rows) == 1 {
			n, err := uints(qBreakdown, rows[0][2])
			if err != nil {
				return nil, err
			}
			out.TotalValues = n[0]
		}
	}
	ans.json = out
	return ans, nil
}

// pageBreakdown is breakdown of one page by a dimension (column, see
// pageColumns).
func (a *API) pageBreakdown(req *request, by, column string, s span, limit, offset int) (*answer, error) {
	p := s.params(req.site)
	p["page"], p["column"] = req.page, column
	p["limit"], p["offset"] = strconv.Itoa(limit), strconv.Itoa(offset)
	rows, err := a.query(req.ctx, qBreakdownPage, p, 4)
	if err != nil {
		return nil, err
	}
	out := breakdownJSON{meta: req.meta(s), By: by, Rows: make([]rowJSON, 0, len(rows)), Limit: limit, Offset: offset}
	ans := &answer{header: []string{by, "views", "uniques"}, end: s.to}
	for _, r := range rows {
		n, err := uints(qBreakdownPage, r[1:]...)
		if err != nil {
			return nil, err
		}
		v := r[0]
		if v == "" {
			v = unknown
		}
		out.Rows = append(out.Rows, rowJSON{Value: v, Views: n[0], Uniques: n[1]})
		out.TotalValues = n[2]
		out.UniquesError = max(out.UniquesError, dimSketch.uniquesError(n[1]))
		ans.rows = append(ans.rows, []string{v, strconv.FormatUint(n[0], 10), strconv.FormatUint(n[1], 10)})
	}
	if len(rows) == 0 && offset > 0 {
		// Past the last value: count them for the client's pager.
		p["offset"], p["limit"] = "0", "1"
		if rows, err = a.query(req.ctx, qBreakdownPage, p, 4); err != nil {
			return nil, err
		}
		if len(rows) == 1 {
			n, err := uints(qBreakdownPage, rows[0][3])
			if err != nil {
				return nil, err
			}
			out.TotalValues = n[0]
		}
	}
	ans.json = out
	return ans, nil
}

// writeCSV answers with the CSV form: a header row, then one row per item.
// Cells a spreadsheet would run as a formula (page paths and referrers are
// visitor-controlled) are prefixed with a quote, in a copy: the answer
// may be cached.
func writeCSV(c *gin.Context, ans *answer) {
	c.Header("Content-Type", "text/csv; charset=utf-8")
	c.Status(http.StatusOK)
	w := csv.NewWriter(c.Writer)
	_ = w.Write(ans.header)
	out := make([]string, len(ans.header))
	for _, r := range ans.rows {
		out = append(out[:0], r...)
		for i, cell := range out {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) && !isNumber(cell) {
				out[i] = "'" + cell
			}
		}
		_ = w.Write(out)
	}
	w.Flush()
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

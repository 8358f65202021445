package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/viewcount/viewcount/sql/analyst"
)

// UpstreamReadOnly runs analysts' queries on a ClickHouse server, through
// its HTTP interface as a read-only user: the server-mode counterpart of
// ReadOnly. It runs only statements analyst.Check cleared, and the
// server's engine gives its opinion first (EXPLAIN AST of the same text),
// as on the embedded store. The user's own profile and grants hold the
// engine to readonly=1, the viewcount tables and the limits
// (deploy/clickhouse/users.d/analyst.xml); the checks in front keep
// everything else out.
type UpstreamReadOnly struct {
	base     *url.URL // without credentials
	user     string
	password string
	db       string
	limits   Limits
	client   *http.Client
}

// MaxUpstreamAnswer bounds an answer read from the server, so one query
// cannot fill the process's memory: about the operator's max_result_rows
// of wide rows.
const MaxUpstreamAnswer = 512 << 20

// OpenReadOnlyUpstream returns a client of the ClickHouse server at rawURL
// (http(s)://user:password@host:8123), reading database db.
func OpenReadOnlyUpstream(rawURL, db string, limits Limits) (*UpstreamReadOnly, error) {
	limits.defaults()
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("store: analyst upstream: want http(s)://user:password@host:port, got %q", redactURL(rawURL))
	}
	if !identRE.MatchString(db) {
		return nil, fmt.Errorf("store: analyst upstream: database %q", db)
	}
	r := &UpstreamReadOnly{db: db, limits: limits, client: &http.Client{}}
	if u.User != nil {
		r.user = u.User.Username()
		r.password, _ = u.User.Password()
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	u.Path = strings.TrimSuffix(u.Path, "/") + "/"
	r.base = u
	return r, nil
}

// redactURL is a URL for a message, without its password.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable)"
	}
	return u.Redacted()
}

// Database is the one database analysts read.
func (r *UpstreamReadOnly) Database() string { return r.db }

// DatabaseName is the database st reads and writes.
func DatabaseName(st Store) string {
	switch s := st.(type) {
	case *chdbStore:
		return s.db
	case *chStore:
		return s.db
	}
	return ""
}

// Policy is what analysts may read here, for analyst.Check.
func (r *UpstreamReadOnly) Policy() analyst.Policy {
	return analyst.Policy{Database: r.db, Limits: analyst.Limits{
		MaxExecutionTime: r.limits.MaxExecutionTime, MaxResultRows: r.limits.MaxResultRows, MaxMemoryUsage: r.limits.MaxMemoryUsage,
	}}
}

// Query runs a cleared statement on the server and returns its output in
// format (or the statement's FORMAT). ctx bounds the whole exchange: when
// it ends the request is cancelled, and the server, with
// cancel_http_readonly_queries_on_client_close in the user's profile,
// stops the query.
func (r *UpstreamReadOnly) Query(ctx context.Context, q analyst.Query, format string, params Params) ([]byte, QueryStats, error) {
	if q.Format != "" {
		format = q.Format
	}
	f, ok := analyst.Format(format)
	if !ok {
		return nil, QueryStats{}, &analyst.Error{Code: 73, Name: "UNKNOWN_FORMAT", Msg: "format " + strconv.Quote(format) + " is not offered here"}
	}
	start := time.Now()
	ast, _, err := r.post(ctx, "EXPLAIN AST "+q.Text(), "TabSeparatedRaw", params, q.MaxExecutionTime)
	if err != nil {
		return nil, QueryStats{Elapsed: time.Since(start)}, err
	}
	if err := q.VerifyEngineAST(string(ast)); err != nil {
		return nil, QueryStats{Elapsed: time.Since(start)}, err
	}
	out, st, err := r.post(ctx, q.Text(), f, params, q.MaxExecutionTime)
	st.Elapsed = time.Since(start)
	return out, st, err
}

// post sends one statement and reads the answer: the body, or the
// server's "Code: N. DB::Exception: …" as the error.
func (r *UpstreamReadOnly) post(ctx context.Context, query, format string, params Params, maxTime time.Duration) ([]byte, QueryStats, error) {
	v := url.Values{"database": {r.db}, "default_format": {format}}
	for k, p := range params {
		v.Set("param_"+k, p)
	}
	if maxTime > 0 {
		v.Set("max_execution_time", strconv.FormatInt(int64((maxTime+time.Second-1)/time.Second), 10))
	}
	u := *r.base
	u.RawQuery = v.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(query))
	if err != nil {
		return nil, QueryStats{}, fmt.Errorf("store: analyst upstream: %w", err)
	}
	if r.user != "" {
		req.SetBasicAuth(r.user, r.password)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, QueryStats{}, ctxErr
		}
		return nil, QueryStats{}, fmt.Errorf("store: analyst upstream %s: %w", r.base.Host, errors.Unwrap(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxUpstreamAnswer+1))
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, QueryStats{}, ctxErr
		}
		return nil, QueryStats{}, fmt.Errorf("store: analyst upstream %s: reading the answer: %w", r.base.Host, err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-ClickHouse-Exception-Code") != "" {
		msg := strings.TrimSpace(string(body))
		if !strings.HasPrefix(msg, "Code: ") {
			msg = fmt.Sprintf("Code: 1002. DB::Exception: the ClickHouse server answered %d. (UNKNOWN_EXCEPTION)", resp.StatusCode)
		}
		return nil, QueryStats{}, errors.New(trimEngineError(msg))
	}
	if len(body) > MaxUpstreamAnswer {
		return nil, QueryStats{}, &analyst.Error{Code: 396, Name: "TOO_MANY_ROWS_OR_BYTES", Msg: fmt.Sprintf("the answer is over %d bytes", MaxUpstreamAnswer)}
	}
	return body, summaryStats(resp.Header.Get("X-ClickHouse-Summary")), nil
}

// summaryStats reads the rows and bytes read from X-ClickHouse-Summary.
func summaryStats(h string) QueryStats {
	var s map[string]string
	if json.Unmarshal([]byte(h), &s) != nil {
		return QueryStats{}
	}
	rows, _ := strconv.ParseUint(s["read_rows"], 10, 64)
	b, _ := strconv.ParseUint(s["read_bytes"], 10, 64)
	return QueryStats{RowsRead: rows, BytesRead: b}
}

// Close releases idle connections.
func (r *UpstreamReadOnly) Close() error {
	r.client.CloseIdleConnections()
	return nil
}

package sqlhttp

import (
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/analyst"
	"github.com/viewcount/viewcount/sql/store"
)

// Querier runs one cleared query and returns its output in format; Policy
// says what analyst.Check lets through to it.
type Querier interface {
	Query(ctx context.Context, q analyst.Query, format string, params store.Params) ([]byte, store.QueryStats, error)
	Database() string
	Policy() analyst.Policy
}

// Tokens checks an analyst token (internal/stream.Tokens); an unknown one
// is viewcount.ErrTokenUnknown.
type Tokens interface {
	Check(ctx context.Context, token string) (viewcount.Token, error)
}

// MaxQueryBytes bounds a request's query text (URL query plus body).
const MaxQueryBytes = 1 << 20

// Handler is the ClickHouse-compatible HTTP endpoint.
type Handler struct {
	q          Querier
	tokens     Tokens
	adminToken string
	limit      time.Duration // the longest a request may take
	logger     *slog.Logger

	tzOnce sync.Once
	tz     string
}

// New returns the handler. limit bounds a whole request (the wait for the
// store's one read-only connection, which ends in
// TOO_MANY_SIMULTANEOUS_QUERIES (503), the checks and the query); 0 means
// 30 s. The store's own limit, and a lower max_execution_time the request
// asks for, bound it further.
func New(q Querier, tokens Tokens, adminToken string, limit time.Duration, logger *slog.Logger) *Handler {
	if limit <= 0 {
		limit = 30 * time.Second
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Handler{q: q, tokens: tokens, adminToken: adminToken, limit: limit, logger: logger.With("component", "sqlhttp")}
}

// ServeHTTP answers /ping and queries on /; other paths are 404 as in
// ClickHouse.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/ping" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
		_, _ = io.WriteString(w, "Ok.\n")
	case r.URL.Path == "/" && r.Method == http.MethodGet && r.URL.RawQuery == "":
		// ClickHouse answers a bare GET / like /ping; some clients probe it.
		w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
		_, _ = io.WriteString(w, "Ok.\n")
	case r.URL.Path == "/" && (r.Method == http.MethodGet || r.Method == http.MethodPost):
		h.query(w, r)
	case r.URL.Path == "/":
		w.Header().Set("Allow", "GET, POST")
		h.fail(w, r, "", newException(codeBadArguments, "BAD_ARGUMENTS", "method "+r.Method+" is not allowed: use GET or POST"))
	default:
		h.fail(w, r, "", newException(codeBadArguments, "BAD_ARGUMENTS", "there is no handler for "+r.URL.Path))
	}
}

// request is what one HTTP request asks for.
type request struct {
	query   string
	format  string
	queryID string
	params  store.Params
	gzip    bool
}

func (h *Handler) query(w http.ResponseWriter, r *http.Request) {
	queryID := r.URL.Query().Get("query_id")
	if queryID == "" {
		queryID = newQueryID()
	}
	if ex, ok := h.authenticate(r); !ok {
		h.fail(w, r, queryID, ex)
		return
	}
	req, ex, ok := h.parse(r, queryID)
	if !ok {
		h.fail(w, r, queryID, ex)
		return
	}
	// The time limit bounds the whole request: the wait for the
	// connection, the checks and the query. A client may ask for less.
	limit := h.limit
	policy := h.q.Policy()
	if l := policy.Limits.MaxExecutionTime; l > 0 && l < limit {
		limit = l
	}
	if d := askedExecutionTime(r); d > 0 && d < limit {
		limit = d
	}
	q, err := analyst.Check(req.query, policy)
	if err != nil {
		h.fail(w, r, queryID, engineException(err.Error()))
		return
	}
	if q.MaxExecutionTime > 0 && q.MaxExecutionTime < limit {
		limit = q.MaxExecutionTime
	}
	ctx, cancel := context.WithTimeout(r.Context(), limit)
	defer cancel()
	if ex, ok := h.checkSettings(ctx, r); !ok {
		h.fail(w, r, queryID, ex)
		return
	}
	out, st, err := h.q.Query(ctx, q, req.format, req.params)
	if err != nil {
		switch {
		case r.Context().Err() != nil:
		case errors.Is(err, store.ErrBusy):
			h.fail(w, r, queryID, newException(codeTooMany, "TOO_MANY_SIMULTANEOUS_QUERIES", "the analyst connection stayed busy; try again"))
			return
		case errors.Is(err, context.DeadlineExceeded):
			h.fail(w, r, queryID, newException(codeTimeout, "TIMEOUT_EXCEEDED", fmt.Sprintf("the request ran past its time limit (%s)", limit)))
			return
		}
		if errors.Is(err, store.ErrClosed) || r.Context().Err() != nil {
			h.logger.Warn("query not run", "query_id", queryID, "err", err)
		}
		h.fail(w, r, queryID, engineException(err.Error()))
		return
	}
	format := req.format
	if q.Format != "" {
		format = q.Format
	}
	if rev, _ := strconv.Atoi(r.URL.Query().Get("client_protocol_version")); rev > 0 && format == "Native" {
		if out, err = reviseNative(out, rev); err != nil {
			h.fail(w, r, queryID, newException(48, "NOT_IMPLEMENTED", "Native output for client_protocol_version: "+err.Error()))
			return
		}
	}
	hd := w.Header()
	hd.Set("Content-Type", contentType(format))
	hd.Set("X-ClickHouse-Format", format)
	hd.Set("X-ClickHouse-Query-Id", queryID)
	hd.Set("X-ClickHouse-Timezone", h.timezone(r.Context()))
	hd.Set("X-ClickHouse-Summary", summary(st, len(out), resultRows(format, out)))
	if req.gzip {
		hd.Set("Content-Encoding", "gzip")
		hd.Del("Content-Length")
		zw := gzip.NewWriter(w)
		_, _ = zw.Write(out)
		_ = zw.Close()
		return
	}
	hd.Set("Content-Length", strconv.Itoa(len(out)))
	_, _ = w.Write(out)
}

// parse reads the query (URL query= followed by the body, as ClickHouse
// joins them), the format, the parameters and database=.
func (h *Handler) parse(r *http.Request, queryID string) (request, exception, bool) {
	u := r.URL.Query()
	req := request{queryID: queryID, params: store.Params{}, format: "TabSeparated"}
	if f := u.Get("default_format"); f != "" {
		name, ok := analyst.Format(f)
		if !ok {
			return req, newException(73, "UNKNOWN_FORMAT", "default_format: format "+strconv.Quote(f)+" is not offered here"), false
		}
		req.format = name
	}
	if db := u.Get("database"); db != "" && db != h.q.Database() {
		return req, newException(codeAccessDenied, "ACCESS_DENIED", "database: only "+h.q.Database()+" can be read here"), false
	}
	for k, vs := range u {
		if name, ok := strings.CutPrefix(k, "param_"); ok && len(vs) > 0 {
			req.params[name] = vs[0]
		}
	}
	var body []byte
	if r.Method == http.MethodPost {
		rd := io.Reader(http.MaxBytesReader(nil, r.Body, MaxQueryBytes+1))
		if strings.EqualFold(r.Header.Get("Content-Encoding"), "gzip") {
			zr, err := gzip.NewReader(rd)
			if err != nil {
				return req, newException(36, "BAD_ARGUMENTS", "body: not gzip"), false
			}
			rd = io.LimitReader(zr, MaxQueryBytes+1)
		}
		mt, mp, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if mt == "multipart/form-data" {
			// The JavaScript client sends long parameters as form parts.
			r.Body = io.NopCloser(rd)
			if err := r.ParseMultipartForm(MaxQueryBytes); err != nil || mp["boundary"] == "" {
				return req, newException(36, "BAD_ARGUMENTS", "body: bad multipart form"), false
			}
			for k, vs := range r.MultipartForm.Value {
				if name, ok := strings.CutPrefix(k, "param_"); ok && len(vs) > 0 {
					req.params[name] = vs[0]
				}
			}
			if qs := r.MultipartForm.Value["query"]; len(qs) > 0 {
				body = []byte(qs[0])
			}
		} else {
			b, err := io.ReadAll(rd)
			if err != nil && !isTooLarge(err) {
				return req, newException(36, "BAD_ARGUMENTS", "body: "+err.Error()), false
			}
			body = b
		}
	}
	q := u.Get("query")
	switch {
	case q != "" && len(body) > 0:
		q += "\n" + string(body)
	case q == "":
		q = string(body)
	}
	if len(q) > MaxQueryBytes {
		return req, newException(codeTooLarge, "QUERY_IS_TOO_LARGE", fmt.Sprintf("query: at most %d bytes", MaxQueryBytes)), false
	}
	if strings.TrimSpace(q) == "" {
		return req, newException(211, "EMPTY_QUERY", "Empty query"), false
	}
	req.query = q
	req.gzip = u.Get("enable_http_compression") == "1" && acceptsGzip(r.Header.Get("Accept-Encoding"))
	return req, exception{}, true
}

func isTooLarge(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}

// authenticate accepts an analyst token or the admin token given as HTTP
// basic auth's password (any user), X-ClickHouse-Key, a Bearer token or
// ?password=.
func (h *Handler) authenticate(r *http.Request) (exception, bool) {
	var token string
	if _, pw, ok := r.BasicAuth(); ok {
		token = pw
	} else if k := r.Header.Get("X-ClickHouse-Key"); k != "" {
		token = k
	} else if a := r.Header.Get("Authorization"); len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		token = strings.TrimSpace(a[7:])
	} else {
		token = r.URL.Query().Get("password")
	}
	denied := newException(codeAuthFailed, "AUTHENTICATION_FAILED", "analyst: Authentication failed: password is incorrect, or there is no user with such name")
	if token == "" {
		return denied, false
	}
	if h.adminToken != "" && subtle.ConstantTimeCompare([]byte(token), []byte(h.adminToken)) == 1 {
		return exception{}, true
	}
	if _, err := h.tokens.Check(r.Context(), token); err != nil {
		if !errors.Is(err, viewcount.ErrTokenUnknown) {
			h.logger.Error("token check failed", "err", err)
			return newException(codeUnknown, "UNKNOWN_EXCEPTION", "token registry unavailable"), false
		}
		return denied, false
	}
	return exception{}, true
}

// fail writes ex as ClickHouse does: its status, the code in
// X-ClickHouse-Exception-Code, the text as the body.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, queryID string, ex exception) {
	hd := w.Header()
	hd.Set("Content-Type", "text/plain; charset=UTF-8")
	hd.Set("X-ClickHouse-Exception-Code", strconv.Itoa(ex.code))
	if queryID != "" {
		hd.Set("X-ClickHouse-Query-Id", queryID)
	}
	w.WriteHeader(status(ex.code))
	_, _ = io.WriteString(w, ex.text+"\n")
}

func (h *Handler) timezone(ctx context.Context) string {
	h.tzOnce.Do(func() {
		q, err := analyst.Check("SELECT timezone()", h.q.Policy())
		if err != nil {
			return
		}
		out, _, err := h.q.Query(ctx, q, "TabSeparated", nil)
		if err == nil {
			h.tz = strings.TrimSpace(string(out))
		}
	})
	if h.tz == "" {
		return "UTC"
	}
	return h.tz
}

// summary is X-ClickHouse-Summary with ClickHouse's keys, numbers as
// strings as ClickHouse sends them: the rows and bytes the engine read
// (chDB's counters), the result's; writes are always 0 here.
func summary(st store.QueryStats, resultBytes, resultRows int) string {
	b, _ := json.Marshal(map[string]string{
		"read_rows":          strconv.FormatUint(st.RowsRead, 10),
		"read_bytes":         strconv.FormatUint(st.BytesRead, 10),
		"written_rows":       "0",
		"written_bytes":      "0",
		"total_rows_to_read": strconv.FormatUint(st.RowsRead, 10),
		"result_rows":        strconv.Itoa(resultRows),
		"result_bytes":       strconv.Itoa(resultBytes),
		"elapsed_ns":         strconv.FormatInt(st.Elapsed.Nanoseconds(), 10),
	})
	return string(b)
}

var jsonRowsField = regexp.MustCompile(`\n\t"rows": (\d+),`)

// askedExecutionTime is the max_execution_time a request's URL asks for
// (clickhouse-go sends its read timeout), or 0.
func askedExecutionTime(r *http.Request) time.Duration {
	v, err := strconv.ParseFloat(r.URL.Query().Get("max_execution_time"), 64)
	if err != nil || v <= 0 || v > 1e6 {
		return 0
	}
	return time.Duration(v * float64(time.Second))
}

// resultRows counts the answer's rows where the format makes that cheap.
func resultRows(format string, out []byte) int {
	switch strings.ToLower(format) {
	case "tabseparated", "tsv", "csv", "jsoneachrow", "jsoncompacteachrow", "jsonlines", "ndjson", "tabseparatedraw", "tsvraw":
		return strings.Count(string(out), "\n")
	case "tabseparatedwithnames", "tsvwithnames", "csvwithnames":
		return max(strings.Count(string(out), "\n")-1, 0)
	case "tabseparatedwithnamesandtypes", "tsvwithnamesandtypes", "csvwithnamesandtypes":
		return max(strings.Count(string(out), "\n")-2, 0)
	case "json", "jsoncompact", "jsonstrings", "jsoncompactstrings":
		if m := jsonRowsField.FindSubmatch(out); m != nil {
			n, _ := strconv.Atoi(string(m[1]))
			return n
		}
	}
	return 0
}

func contentType(format string) string {
	switch f := strings.ToLower(format); {
	case strings.HasPrefix(f, "json") && !strings.Contains(f, "eachrow") && f != "jsonlines":
		return "application/json; charset=UTF-8"
	case strings.HasPrefix(f, "csv"):
		return "text/csv; charset=UTF-8; header=absent"
	case strings.HasPrefix(f, "tabseparated"), strings.HasPrefix(f, "tsv"):
		return "text/tab-separated-values; charset=UTF-8"
	case f == "native", f == "rowbinary", strings.HasPrefix(f, "rowbinary"), f == "parquet", f == "arrow", f == "arrowstream", f == "orc", f == "avro":
		return "application/octet-stream"
	}
	return "text/plain; charset=UTF-8"
}

func acceptsGzip(ae string) bool {
	for part := range strings.SplitSeq(ae, ",") {
		name, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(name, "gzip") {
			return true
		}
	}
	return false
}

func newQueryID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	s := fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
	return s
}

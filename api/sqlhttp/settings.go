package sqlhttp

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/viewcount/viewcount/sql/analyst"
	"github.com/viewcount/viewcount/sql/store"
)

// protocolParams are URL parameters of ClickHouse's HTTP interface that are
// not settings, or settings about the HTTP exchange that this endpoint
// fulfils itself (compression) or that change nothing here: answers are
// always whole before they are sent (as wait_end_of_query=1 asks), without
// progress headers, and every query is its own session.
var protocolParams = map[string]bool{
	"query": true, "database": true, "default_format": true, "query_id": true,
	"user": true, "password": true, "quota_key": true, "role": true,
	"session_id": true, "session_timeout": true, "session_check": true,
	"buffer_size": true, "stacktrace": true,
	"wait_end_of_query": true, "http_wait_end_of_query": true, "enable_http_compression": true,
	"http_zlib_compression_level": true, "send_progress_in_http_headers": true,
	"http_headers_progress_interval_ms": true, "cancel_http_readonly_queries_on_client_close": true,
	"http_response_buffer_size": true, "http_write_exception_in_output_format": true,
	"client_protocol_version": true,
	// Limits: clients send their own (clickhouse-go sends
	// max_execution_time from its read timeout). The operator's limits
	// hold on the connection whatever a client asks, so asking is harmless
	// and answered as if granted.
	"max_execution_time": true, "max_result_rows": true, "max_result_bytes": true, "max_memory_usage": true,
}

// settingsQuery reads the current values of the settings a request names.
const settingsQuery = "SELECT name, value FROM system.settings WHERE name IN {names:Array(String)}"

// checkSettings holds the request's settings to what the read-only
// connection already has: the engine forbids changing any setting at
// readonly=1, so a setting is accepted when it asks for the value in force
// (clients send defaults such as output_format_json_quote_64bit_integers=1)
// and refused as ClickHouse refuses it otherwise.
func (h *Handler) checkSettings(ctx context.Context, r *http.Request) (exception, bool) {
	u := r.URL.Query()
	// ClickHouse's own block compression (compress=1, decompress=1) frames
	// the answer in LZ4/ZSTD blocks this endpoint does not write; gzip
	// (enable_http_compression=1) is what it offers instead.
	for _, k := range []string{"compress", "decompress"} {
		if v := u.Get(k); v != "" && v != "0" {
			return newException(codeBadArguments, "BAD_ARGUMENTS", k+"=1 (ClickHouse block compression) is not supported here: use enable_http_compression=1 (gzip) or none"), false
		}
	}
	var names []string
	for k := range u {
		if !protocolParams[k] && !strings.HasPrefix(k, "param_") {
			names = append(names, k)
		}
	}
	if len(names) == 0 {
		return exception{}, true
	}
	slices.Sort(names)
	q, err := analyst.Check(settingsQuery, h.q.Policy())
	if err != nil {
		return engineException(err.Error()), false
	}
	out, _, err := h.q.Query(ctx, q, "TabSeparated", store.Params{"names": store.ArrayParam(names)})
	if err != nil {
		return engineException(err.Error()), false
	}
	current := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSuffix(string(out), "\n"), "\n") {
		if name, value, ok := strings.Cut(line, "\t"); ok {
			current[name] = value
		}
	}
	for _, name := range names {
		have, known := current[name]
		if !known {
			return newException(115, "UNKNOWN_SETTING", "Unknown setting '"+name+"'"), false
		}
		if !sameValue(have, u.Get(name)) {
			return newException(codeReadonly, "READONLY", "Cannot modify '"+name+"' setting in readonly mode: the operator sets this endpoint's settings"), false
		}
	}
	return exception{}, true
}

// sameValue compares a setting's value as system.settings shows it with a
// client's spelling of it (booleans as 0/1 or false/true).
func sameValue(have, want string) bool {
	norm := func(s string) string {
		switch strings.ToLower(strings.Trim(s, "'")) {
		case "true":
			return "1"
		case "false":
			return "0"
		}
		return strings.Trim(s, "'")
	}
	return norm(have) == norm(want)
}

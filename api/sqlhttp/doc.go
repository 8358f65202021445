// Package sqlhttp serves analysts' read-only SQL over ClickHouse's own HTTP
// interface (POST / and GET /?query=, FORMAT and default_format, {name:Type}
// parameters with param_name=, X-ClickHouse-* headers, ClickHouse's error
// form), so clickhouse-client, the official JavaScript client, Grafana and
// DBeaver work against the embedded store unchanged.
//
// Every query is cleared by analyst.Check before anything runs it; what
// runs is the text Check printed, on a Querier that gets the engine's own
// opinion first and holds the engine to readonly=1 and the operator's
// limits (store.ReadOnly, or store.UpstreamReadOnly for a ClickHouse
// server). The time limit bounds the whole request. It never logs a
// query's text, its parameters or a token.
package sqlhttp

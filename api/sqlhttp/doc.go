// Package sqlhttp serves analysts' read-only SQL over ClickHouse's own HTTP
// interface (POST / and GET /?query=, FORMAT and default_format, {name:Type}
// parameters with param_name=, X-ClickHouse-* headers, ClickHouse's error
// form), so clickhouse-client, the official JavaScript client, Grafana and
// DBeaver work against the embedded store unchanged.
//
// It never decides what is read-only: every query runs on the store's
// read-only connection (store.ReadOnly), which the engine holds to readonly=1
// and the operator's limits. It never logs a query's text, its parameters or
// a token.
package sqlhttp

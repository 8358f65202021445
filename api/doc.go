// Package api serves what people read: the lagged public counts (a page, a
// batch of pages, an SVG badge; readable from any origin), the admin
// endpoints that register sites, and the operator's health, readiness and
// metrics. Public counts come from a snapshot refreshed in the background,
// never from a query per request, and every count says how old it is.
//
// It reads rollups only; it never writes events or touches the stream's
// message flow.
package api

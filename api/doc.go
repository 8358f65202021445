// Package api serves what people read: the lagged public counts (a page, a
// batch of pages, an SVG badge; readable from any origin) and the admin
// endpoints that register sites. The health, readiness and metrics routes
// every process mounts are internal/httpserve's, not the api's. Public
// counts come from a snapshot refreshed in the background, never from a
// query per request, and every count says how old it is.
//
// It reads rollups only; it never writes events or touches the stream's
// message flow.
package api

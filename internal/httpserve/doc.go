// Package httpserve is what every Viewcount role serves HTTP with: the Gin
// engine (NewEngine: trusted proxies, a recovery that masks addresses,
// nosniff on every answer, the JSON 404 and 405 answers) and the health
// routes every process mounts (Health: /healthz, /readyz, /metrics), so an
// ingest-only or validate-only process needs neither package api nor any
// other role for its router and its probes.
//
// It must never hold a role's routes or import a role: ingest, validate,
// rollup and api register their own on the engine it returns.
package httpserve

// Package viewcount is the shared vocabulary of the service: the event a hit
// becomes, the verdict every event receives, the stream subjects and bucket
// names every role agrees on, the compact binary encoding events travel in,
// the process metrics, what a count does not include yet (Pending), and
// the allocation-free query reading the pixel and the public count share
// (QueryValues).
//
// It imports nothing but the standard library, so every role (ingest,
// validate, rollup, api) can depend on it without depending on each other.
// It must never hold a raw client IP: by the time an Event exists the IP has
// been turned into the Visitor and Network hashes.
package viewcount

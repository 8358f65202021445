// Package viewcount is the shared vocabulary of the service: the event a hit
// becomes, the verdict every event receives, the stream subjects and bucket
// names every role agrees on, the compact binary encoding events travel in,
// the process metrics, what a count does not include yet (Pending), and
// the allocation-free query reading the pixel and the public count share
// (QueryValues).
//
// It also holds what the admin surfaces speak: a registered Site with its
// host rules and its token checks, an analyst Token, an operator's
// Correction (with its audit trail, CorrectionRecord, and the body that
// asks for one, CorrectionRequest), a revalidation's RevalidateRequest and
// RevalidateResult, and the sentinel errors callers branch on
// (ErrSiteExists, ErrSiteUnknown, ErrTokenUnknown, …: errors.go). The
// stores of these (internal/stream's registries, validate's corrections
// table) and the services that act on them (validate.Revalidator) live in
// their packages; the api declares the small interfaces it consumes over
// these types, and cmd/viewcount wires the implementations in.
//
// It imports nothing but the standard library, so every role (ingest,
// validate, rollup, api) can depend on it without depending on each other.
// It must never hold a raw client IP: by the time an Event exists the IP has
// been turned into the Visitor and Network hashes.
package viewcount

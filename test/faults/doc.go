// Package faults is the fault-injection suite (docs/development.md,
// "Fault-injection suite"): its tests (build
// tag faults, run by `make faults` and `make soak`) build `viewcount` with
// the store fault hook, run `viewcount serve` as a child process under
// steady pixel and beacon load with event ids and retries, inject faults
// (kill -9, store outages, a full disk, descriptor exhaustion, NATS stalls,
// connection floods) on a seeded schedule, and check after each that every
// acknowledged id is counted exactly once, every rollup equals a recount of
// views_raw, and the process healed without a restart where the fault was
// transient.
//
// The package holds no production code; it never sends traffic anywhere
// but 127.0.0.1.
package faults

// Package validate is the validation runtime: it runs the rules of package
// judge over the stream. A Validator leases partitions, reads each from
// JetStream, replays the events before its resume point to rebuild the
// rules' windows, feeds the rest to one judge.Rules per partition, holds the
// valid views of watched visitors and networks for the settle window, and
// hands every verdict, with its dashboard dimensions and rule-set version,
// to the sink. Around that loop it records rule sets (VC_RULES), reports
// progress, health and pending counts, pauses for a revalidation, repairs a
// stream or progress record cut short, keeps the operators' corrections in
// the store, revalidates ranges of the past (Revalidator) and explains
// stored verdicts (ExplainStored).
//
// It must never drop an event (a rejection is a verdict, not a deletion),
// never decide a verdict itself (every verdict is judge's, so a
// revalidation, an explanation and a replay agree with the validator), never
// let the wall clock into what is judged (held views are released by ticks,
// which are messages in the stream, so a replay releases them at the same
// point), and never write a partition whose lease it has lost.
package validate

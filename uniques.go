package viewcount

// CapUniques is the number of unique visitors to show beside views, the
// exact count of the same valid views, when uniques is a sketch's reading
// of their distinct visitor ids: uniques, but never more than views.
//
// Why a cap, and why only here: distinct visitors can never outnumber the
// views they made, but a HyperLogLog estimate is as likely to read above
// the true count as below, so where nearly every view is its own visitor
// (a page shared once, a referrer sending one view per person) it reads
// above the views too: 722 visitors for 717 views. The readers avoid that
// where they can: a count small enough is read from a sketch that is still
// an exact set (docs/stats.md, "Unique visitors"). Where only an estimate
// exists, min(estimate, views) is never farther from the true count than
// the estimate is (true ≤ views < estimate), so the cap takes nothing
// from accuracy. It is the last step of every reading, so two surfaces
// showing one quantity cap it alike.
func CapUniques(views, uniques uint64) uint64 { return min(uniques, views) }

package viewcount

import "time"

// RevalidateRequest is one revalidation: a site's events received in
// [From, To), judged again with the current rules.
//
// It is also the body of POST /v1/admin/revalidate.
type RevalidateRequest struct {
	Site   string    `json:"site"`
	From   time.Time `json:"from"`
	To     time.Time `json:"to"`
	DryRun bool      `json:"dry_run"`
	Who    string    `json:"who"` // recorded in the audit trail, e.g. who asked and why
}

// RevalidateResult says what a revalidation judged, from where, and what
// changed (or would, on a dry run).
type RevalidateResult struct {
	Site    string            `json:"site"`
	From    time.Time         `json:"from"`
	To      time.Time         `json:"to"`
	Rules   string            `json:"rules"`
	DryRun  bool              `json:"dry_run"`
	Sources []PartitionSource `json:"sources"`
	Judged  int               `json:"judged"`
	Changed int               `json:"changed"`
	// Visits counts the rows, in the range and up to the visit stage's
	// reach after it (the end of its last UTC day plus the engagement
	// horizon), whose visit and engagement columns were recomputed to new
	// values; Followed the engagement reports after the range whose
	// verdict changed with their view's (docs/engagement.md).
	Visits   int            `json:"visits_rewritten"`
	Followed int            `json:"reports_followed"`
	ByReason []ReasonChange `json:"by_reason"`
	ByPage   []PageChange   `json:"by_page"`
	Note     string         `json:"note,omitempty"` // e.g. the range was cut to what views_raw holds
}

// PartitionSource says where a partition's events were read from, and why.
type PartitionSource struct {
	Partition int    `json:"partition"`
	Source    string `json:"source"` // "stream" or "views_raw" (validate.SourceStream, SourceRaw)
	Why       string `json:"why"`
}

// ReasonChange counts the events whose verdict went from one reason to another.
type ReasonChange struct {
	From   Reason `json:"from"`
	To     Reason `json:"to"`
	Events int    `json:"events"`
}

// PageChange is one page's valid views in the range before and after.
type PageChange struct {
	Page   string `json:"page"`
	Before int    `json:"valid_before"`
	After  int    `json:"valid_after"`
}

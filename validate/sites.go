package validate

// SiteLookup says whether a site is registered. The rules consume it once per
// event that passes the user-agent checks, from the validator's goroutine, so
// Known must be cheap (an in-memory set, not a network round trip) and safe
// to call while the registry is being updated. A site registered later makes
// its earlier events no less "unknown": verdicts are never revisited.
type SiteLookup interface {
	Known(site string) bool
}

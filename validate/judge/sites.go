package judge

import "github.com/viewcount/viewcount"

// SiteLookup says which sites are registered, and since when. The rules
// consume it once per event that passes the user-agent checks, from the
// validator's goroutine, so Registered must be cheap (an in-memory map, not
// a network round trip) and safe to call while the registry is being
// updated. An event counts only for the registration it was received
// under (viewcount.InRegistration): one received before its site was
// registered, or before the site was deleted and added again, is
// UnknownSite however late it is judged, and verdicts are never revisited.
//
// A lookup that also implements viewcount.HostLookup (the registry does)
// has its sites' hostnames judged too (ForeignOrigin), by the list in
// force when each view came; one that does not allows every host.
type SiteLookup interface {
	viewcount.Registrations
}

package viewcount

import "errors"

// Errors callers branch on: the site registry and the token registry
// (internal/stream implements both) return them wrapped, and the api maps
// each to its HTTP status. Errors of one check live beside it: ErrBadSite
// (NormaliseSite, CheckRegistrable), ErrBadHostname (CheckHostnames),
// ErrBadPosition (ParseStreamPosition), ErrCorrupt (the event codec).
var (
	// ErrSiteExists: the domain is already registered (adding a site).
	ErrSiteExists = errors.New("site already registered")
	// ErrSiteUnknown: the domain is not registered.
	ErrSiteUnknown = errors.New("site not registered")
	// ErrBadTimezone: not an IANA time zone name (CheckTimezone).
	ErrBadTimezone = errors.New("not an IANA time zone name")

	// ErrTokenUnknown: no such token, or a token that is not one
	// (malformed, revoked, a wrong secret).
	ErrTokenUnknown = errors.New("token not found")
	// ErrBadRole: a token role other than RoleAnalyst.
	ErrBadRole = errors.New(`role: want "analyst"`)
	// ErrBadNote: a token's note longer than 200 bytes.
	ErrBadNote = errors.New("note: at most 200 bytes")
)

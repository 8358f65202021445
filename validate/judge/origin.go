package judge

import "github.com/viewcount/viewcount"

// foreignOrigin reports whether e came from a page on a host its site does
// not allow (viewcount.HostLookup): another site's page carrying this
// site's tag (pixel stuffing, a copied page), a developer's localhost copy.
// Only evidence decides: a view whose request named no page host (a
// stripped Referer, Referrer-Policy: no-referrer on the pixel, a
// server-side client) is no foreign view, so a privacy-minded page or
// browser never loses its visitors here; the other rules judge it as
// before. hosts is nil when the site lookup keeps no hostnames: then
// nothing is foreign.
func foreignOrigin(e *viewcount.Event, hosts viewcount.HostLookup) bool {
	return e.Origin != "" && hosts != nil && !hosts.AllowsHost(e.Site, e.Origin, e.Time)
}

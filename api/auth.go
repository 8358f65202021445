package api

import (
	"crypto/subtle"
	"errors"

	"github.com/gin-gonic/gin"

	"github.com/viewcount/viewcount"
)

// ReadAuth authorises a read of the site named in the route (:site): the
// bearer token must be the site's token, its read-only share token or the
// admin token. It returns the normalised site, or answers the request
// itself (400 for a malformed site name, 401 for a missing or wrong token,
// the same for an unknown site so reads do not reveal which sites exist;
// 404 only to the admin) and returns false. Every check reads the registry
// entry, so a rotated or revoked token fails at once.
//
// The stats and dashboard handlers take it as their auth function.
func (s *Server) ReadAuth(c *gin.Context) (string, bool) {
	return s.authorise(c, shareReads)
}

// siteAuth is ReadAuth without the share token: for what a share link must
// not do (make or revoke share links).
func (s *Server) siteAuth(c *gin.Context) (string, bool) {
	return s.authorise(c, shareRefused)
}

// ownerAuth is siteAuth answering a share token 403 rather than 401: for
// the site's settings, which the dashboard reads with whatever token it
// holds and hides from a share link's viewer when refused. A share token
// is the site's own, so its holder learns nothing from the difference.
func (s *Server) ownerAuth(c *gin.Context) (string, bool) {
	return s.authorise(c, shareForbidden)
}

// shareUse is what a share token may do on a route.
type shareUse int

const (
	shareReads     shareUse = iota // it reads, as the site's token does
	shareRefused                   // refused as a wrong token (401)
	shareForbidden                 // refused as a token that may not (403)
)

func (s *Server) authorise(c *gin.Context, share shareUse) (string, bool) {
	site, err := viewcount.NormaliseSite(c.Param("site"))
	if err != nil {
		s.fail(c, errBadRequest("site: not a domain name"))
		return "", false
	}
	token, ok := bearerToken(c.GetHeader("Authorization"))
	if !ok {
		s.fail(c, errUnauthorized)
		return "", false
	}
	if s.isAdmin(token) {
		if !s.sites.Known(site) {
			s.fail(c, errNotFound("site not registered"))
			return "", false
		}
		return site, true
	}
	reg, err := s.sites.Get(c.Request.Context(), site)
	if err != nil && !errors.Is(err, viewcount.ErrSiteUnknown) {
		// The registry did not answer: a 503 (retry), not a 401 that would
		// sign a dashboard out. It says nothing about the site either.
		s.fail(c, err)
		return "", false
	}
	if err == nil && share == shareForbidden && !reg.CheckToken(token) && reg.CheckShareToken(token) {
		s.fail(c, errForbidden)
		return "", false
	}
	if err != nil || !(reg.CheckToken(token) || share == shareReads && reg.CheckShareToken(token)) {
		// The same answer for an unknown site and a wrong token, so the
		// endpoint does not reveal which sites exist.
		s.fail(c, errUnauthorized)
		return "", false
	}
	return site, true
}

func (s *Server) isAdmin(token string) bool {
	return subtle.ConstantTimeCompare([]byte(token), []byte(s.cfg.AdminToken)) == 1
}

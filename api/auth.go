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
	return s.authorise(c, true)
}

// siteAuth is ReadAuth without the share token: for what a share link must
// not do (make or revoke share links).
func (s *Server) siteAuth(c *gin.Context) (string, bool) {
	return s.authorise(c, false)
}

func (s *Server) authorise(c *gin.Context, shareOK bool) (string, bool) {
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
	if err != nil || !(reg.CheckToken(token) || shareOK && reg.CheckShareToken(token)) {
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

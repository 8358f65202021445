package api

import (
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"
)

// shareResponse is the answer to POST /v1/sites/{site}/share.
type shareResponse struct {
	Token string `json:"token"`
	URL   string `json:"url"`
}

// ShareURL is the path of the dashboard link that carries a share token.
// The token travels in the fragment, which a browser never sends to a
// server, so it stays out of access logs and Referer headers; the
// dashboard's script reads it and sends it as the bearer token.
func ShareURL(site, token string) string {
	return "/dashboard/" + url.PathEscape(site) + "#share=" + url.QueryEscape(token)
}

// createShare answers POST /v1/sites/{site}/share (the site's token or the
// admin's, not a share token): a new read-only share link, replacing the
// site's previous one.
func (s *Server) createShare(c *gin.Context) {
	site, ok := s.siteAuth(c)
	if !ok {
		return
	}
	token, err := s.sites.CreateShare(c.Request.Context(), site)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.logger.Info("share link created", "site", site)
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusCreated, shareResponse{Token: token, URL: ShareURL(site, token)})
}

// revokeShare answers DELETE /v1/sites/{site}/share: the link stops
// working at once. 204 whether or not the site had one, so a retried
// revoke succeeds.
func (s *Server) revokeShare(c *gin.Context) {
	site, ok := s.siteAuth(c)
	if !ok {
		return
	}
	if err := s.sites.RevokeShare(c.Request.Context(), site); err != nil {
		s.fail(c, err)
		return
	}
	s.logger.Info("share link revoked", "site", site)
	c.Status(http.StatusNoContent)
}

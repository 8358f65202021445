package api

import (
	"github.com/gin-gonic/gin"
)

// siteRoutes registers the endpoints that manage sites and share links.
func (s *Server) siteRoutes(r gin.IRouter) {
	r.POST("/v1/sites/:site/share", s.createShare)
	r.DELETE("/v1/sites/:site/share", s.revokeShare)
}

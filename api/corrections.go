package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/viewcount/viewcount"
)

// Corrector keeps the operators' corrections (validate's, behind cmd's
// adapter): adding or undoing one records it with who and why, then
// revalidates its range so the past follows, calling progress as
// Revalidator does; the result is the correction and the revalidation's
// result. A request wrong as asked wraps ErrRevalidateRequest, an unknown
// id ErrNotFound, both returned before any progress. ListCorrections
// returns every correction, in force or undone, newest first.
type Corrector interface {
	AddCorrection(ctx context.Context, req viewcount.CorrectionRequest, progress func(string)) (viewcount.CorrectionResult, error)
	UndoCorrection(ctx context.Context, id, who, why string, progress func(string)) (viewcount.CorrectionResult, error)
	ListCorrections(ctx context.Context) ([]viewcount.CorrectionRecord, error)
}

func (s *Server) correctionRoutes(r gin.IRouter) {
	r.POST("/v1/admin/corrections", s.requireAdmin, s.addCorrection)
	r.GET("/v1/admin/corrections", s.requireAdmin, s.listCorrections)
	r.DELETE("/v1/admin/corrections/:id", s.requireAdmin, s.undoCorrection)
}

// addCorrection answers POST /v1/admin/corrections as /revalidate does:
// JSON lines of progress, then {"result": {"correction", "revalidation"}}.
func (s *Server) addCorrection(c *gin.Context) {
	if s.cfg.Corrector == nil {
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": "this process cannot correct (it runs no stream)"})
		return
	}
	var req viewcount.CorrectionRequest
	if !s.decodeAdminBody(c, &req, `{"site", "kind", "value" (or for kind allow "ua", "family", "reason", "asn"), "from", "to" (RFC 3339), "who", "why"}`) {
		return
	}
	if len(req.Who) > 500 || len(req.Why) > 2000 {
		s.fail(c, errBadRequest("who, why: at most 500 and 2000 bytes"))
		return
	}
	s.streamRun(c, func(line func(any)) (any, error) {
		return s.cfg.Corrector.AddCorrection(c.Request.Context(), req, func(p string) { line(gin.H{"progress": p}) })
	})
}

// undoCorrection answers DELETE /v1/admin/corrections/{id}?who=&why=.
func (s *Server) undoCorrection(c *gin.Context) {
	if s.cfg.Corrector == nil {
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": "this process cannot correct (it runs no stream)"})
		return
	}
	who, why := c.Query("who"), c.Query("why")
	if len(who) > 500 || len(why) > 2000 {
		s.fail(c, errBadRequest("who, why: at most 500 and 2000 bytes"))
		return
	}
	s.streamRun(c, func(line func(any)) (any, error) {
		return s.cfg.Corrector.UndoCorrection(c.Request.Context(), c.Param("id"), who, why, func(p string) { line(gin.H{"progress": p}) })
	})
}

// listCorrections answers GET /v1/admin/corrections.
func (s *Server) listCorrections(c *gin.Context) {
	if s.cfg.Corrector == nil {
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": "this process cannot correct (it runs no stream)"})
		return
	}
	all, err := s.cfg.Corrector.ListCorrections(c.Request.Context())
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"corrections": all})
}

package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"
)

// Explainer says why the rules decide what they do (validate's Explain,
// behind cmd's adapter): for a stored event, and for a sample request
// judged as ingest would take it, without storing anything. An unknown
// event wraps ErrNotFound, a sample wrong as asked ErrRevalidateRequest.
type Explainer interface {
	ExplainEvent(ctx context.Context, site, id string) (any, error)
	ExplainSample(ctx context.Context, req SampleRequest) (any, error)
}

// SampleRequest is the body of POST /v1/admin/explain: a request as a
// browser or a bot would send it to the pixel or the beacon.
type SampleRequest struct {
	// Method: GET for the pixel (the default), POST for the beacon.
	Method string `json:"method"`
	// URL: "/p.gif?site=…&page=…" or "/v1/events".
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
	// IP is the client's address (its AS, datacenter ranges, country).
	IP string `json:"ip"`
}

func (s *Server) explainRoutes(r gin.IRouter) {
	r.GET("/v1/admin/explain", s.requireAdmin, s.explainEvent)
	r.POST("/v1/admin/explain", s.requireAdmin, s.explainSample)
}

// explainEvent answers GET /v1/admin/explain?site=&id=: every stored event
// of the site with that id, each rule's decision and its evidence.
func (s *Server) explainEvent(c *gin.Context) {
	if s.cfg.Explainer == nil {
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": "this process cannot explain (it runs no store)"})
		return
	}
	site, id := c.Query("site"), c.Query("id")
	if site == "" || id == "" || len(site) > 253 || len(id) > 128 {
		s.fail(c, errBadRequest("site, id: required (the site and the event id, as views_raw.event_id holds it)"))
		return
	}
	s.answerExplain(c, func() (any, error) { return s.cfg.Explainer.ExplainEvent(c.Request.Context(), site, id) })
}

// explainSample answers POST /v1/admin/explain with a SampleRequest.
func (s *Server) explainSample(c *gin.Context) {
	if s.cfg.Explainer == nil {
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": "this process cannot explain (it runs no store)"})
		return
	}
	var req SampleRequest
	if !s.decodeAdminBody(c, &req, `{"method", "url", "headers", "body", "ip"}`) {
		return
	}
	s.answerExplain(c, func() (any, error) { return s.cfg.Explainer.ExplainSample(c.Request.Context(), req) })
}

func (s *Server) answerExplain(c *gin.Context, run func() (any, error)) {
	res, err := run()
	switch {
	case err == nil:
		c.JSON(http.StatusOK, res)
	case errors.Is(err, ErrNotFound):
		s.fail(c, errNotFound(err.Error()))
	case errors.Is(err, ErrRevalidateRequest):
		s.fail(c, errBadRequest(err.Error()))
	default:
		s.fail(c, err)
	}
}

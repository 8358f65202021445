package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/viewcount/viewcount"
)

// TokenRegistry keeps analyst tokens (internal/stream.Tokens).
type TokenRegistry interface {
	Add(ctx context.Context, role, note string) (viewcount.Token, string, error)
	List(ctx context.Context) ([]viewcount.Token, error)
	Revoke(ctx context.Context, id string) error
}

// TokenRoutes registers the admin API for analyst tokens, which sign in to
// the read-only SQL listener (--sql-listen).
func (s *Server) TokenRoutes(r gin.IRouter, tokens TokenRegistry) {
	h := tokenHandler{s: s, tokens: tokens}
	r.POST("/v1/admin/tokens", s.requireAdmin, h.add)
	r.GET("/v1/admin/tokens", s.requireAdmin, h.list)
	r.DELETE("/v1/admin/tokens/:id", s.requireAdmin, h.revoke)
}

type tokenHandler struct {
	s      *Server
	tokens TokenRegistry
}

func (h tokenHandler) add(c *gin.Context) {
	var req struct {
		Role string `json:"role"`
		Note string `json:"note"`
	}
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, 4096)
	if err := c.ShouldBindJSON(&req); err != nil {
		h.s.fail(c, errBadRequest(`body: want {"role":"analyst","note":"…"}`))
		return
	}
	tok, secret, err := h.tokens.Add(c.Request.Context(), req.Role, req.Note)
	switch {
	case errors.Is(err, viewcount.ErrBadRole), errors.Is(err, viewcount.ErrBadNote):
		h.s.fail(c, errBadRequest(err.Error()))
		return
	case err != nil:
		h.s.fail(c, err)
		return
	}
	h.s.logger.Info("token added", "id", tok.ID, "role", tok.Role)
	c.JSON(http.StatusCreated, gin.H{"id": tok.ID, "role": tok.Role, "note": tok.Note, "created": tok.Created, "token": secret})
}

func (h tokenHandler) list(c *gin.Context) {
	toks, err := h.tokens.List(c.Request.Context())
	if err != nil {
		h.s.fail(c, err)
		return
	}
	if toks == nil {
		toks = []viewcount.Token{}
	}
	c.JSON(http.StatusOK, gin.H{"tokens": toks})
}

func (h tokenHandler) revoke(c *gin.Context) {
	id := c.Param("id")
	err := h.tokens.Revoke(c.Request.Context(), id)
	if errors.Is(err, viewcount.ErrTokenUnknown) {
		h.s.fail(c, errNotFound("token "+id+": not found"))
		return
	}
	if err != nil {
		h.s.fail(c, err)
		return
	}
	h.s.logger.Info("token revoked", "id", id)
	c.Status(http.StatusNoContent)
}

package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/viewcount/viewcount"
)

// Revalidator runs a revalidation: validate.Revalidator behind cmd's
// adapter (the api does not import the validator). progress receives a
// line at each step. A request it cannot serve as asked is an error
// wrapping ErrRevalidateRequest, returned before any progress; any other
// error may come after some (the run stopped: a rerun completes it). The
// result is written out as JSON.
type Revalidator interface {
	Revalidate(ctx context.Context, req viewcount.RevalidateRequest, progress func(string)) (viewcount.RevalidateResult, error)
}

// ErrRevalidateRequest marks a revalidation request that is wrong as asked
// (answered 400 with the error's text, which names only the request).
var ErrRevalidateRequest = errors.New("revalidate request")

// revalidate answers POST /v1/admin/revalidate. A run takes from seconds
// to minutes, so the answer is a stream of JSON lines: {"progress": "…"}
// at each step, then {"result": {…}} or {"error": "…"}. A request wrong as
// asked, or refused before it starts, gets its status (400, 503) instead.
// A client that goes away cuts the run; a rerun completes it.
func (s *Server) revalidate(c *gin.Context) {
	if s.cfg.Revalidator == nil {
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": "this process cannot revalidate (it runs no stream)"})
		return
	}
	var req viewcount.RevalidateRequest
	if !s.decodeAdminBody(c, &req, `{"site", "from", "to" (RFC 3339), "dry_run", "who"}`) {
		return
	}
	if len(req.Who) > 500 {
		s.fail(c, errBadRequest("who: at most 500 bytes"))
		return
	}
	s.streamRun(c, func(line func(any)) (any, error) {
		return s.cfg.Revalidator.Revalidate(c.Request.Context(), req, func(p string) { line(gin.H{"progress": p}) })
	})
}

// decodeAdminBody reads an admin request's JSON body (at most 64 KiB, no
// unknown fields) into v, or answers 400 naming the shape wanted.
func (s *Server) decodeAdminBody(c *gin.Context, v any, want string) bool {
	dec := json.NewDecoder(http.MaxBytesReader(c.Writer, c.Request.Body, 1<<16))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		s.fail(c, errBadRequest("body: want "+want+": "+err.Error()))
		return false
	}
	return true
}

// streamRun answers with run's JSON lines (progress, then {"result": …} or
// {"error": …}), or, when run fails before its first line, with the
// error's status: 400 for ErrRevalidateRequest, 404 for ErrNotFound.
func (s *Server) streamRun(c *gin.Context, run func(line func(any)) (any, error)) {
	started := false
	enc := json.NewEncoder(c.Writer)
	line := func(v any) {
		if !started {
			started = true
			c.Header("Content-Type", "application/x-ndjson")
			c.Status(http.StatusOK)
		}
		_ = enc.Encode(v)
		c.Writer.Flush()
	}
	res, err := run(line)
	switch {
	case err == nil:
		line(gin.H{"result": res})
	case !started && errors.Is(err, ErrRevalidateRequest):
		s.fail(c, errBadRequest(err.Error()))
	case !started && errors.Is(err, ErrNotFound):
		s.fail(c, errNotFound(err.Error()))
	case !started:
		s.fail(c, err)
	default:
		s.logger.Error("revalidation failed", "err", err)
		line(gin.H{"error": "revalidation stopped: " + err.Error() + "; rerun it to complete"})
	}
}

// ErrNotFound marks a request naming something that does not exist
// (answered 404 with the error's text).
var ErrNotFound = errors.New("not found")

package api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/viewcount/viewcount"
)

// httpError is an error whose message is safe to show the client.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func errBadRequest(msg string) error { return &httpError{http.StatusBadRequest, msg} }
func errNotFound(msg string) error   { return &httpError{http.StatusNotFound, msg} }

var (
	errUnauthorized = &httpError{http.StatusUnauthorized, "missing or wrong bearer token"}
	errForbidden    = &httpError{http.StatusForbidden, "a share link is read-only: this needs the site's token"}
)

// fail is the one place errors become HTTP answers: known conditions get
// their status and message; anything else (in practice the store or the
// stream not answering) is logged and answered 503 without internal detail,
// so clients retry.
func (s *Server) fail(c *gin.Context, err error) {
	status, msg := s.answerOf(c, err)
	c.JSON(status, gin.H{"error": msg})
}

// answerOf is err's status and the message a client may see (fail's JSON,
// the badge's error badge).
func (s *Server) answerOf(c *gin.Context, err error) (int, string) {
	var he *httpError
	switch {
	case errors.As(err, &he):
		return he.status, he.msg
	case errors.Is(err, viewcount.ErrBadSite):
		// CheckRegistrable words why, from fixed text only.
		msg := "not a valid domain name"
		if why, ok := strings.CutPrefix(err.Error(), viewcount.ErrBadSite.Error()+": "); ok {
			msg = why
		}
		return http.StatusBadRequest, "domain: " + msg
	case errors.Is(err, viewcount.ErrSiteExists):
		return http.StatusConflict, "site already registered"
	case errors.Is(err, viewcount.ErrSiteUnknown):
		return http.StatusNotFound, "site not registered"
	default:
		s.logger.Error("request failed", "route", c.FullPath(), "err", err)
		return http.StatusServiceUnavailable, "temporarily unavailable; try again"
	}
}

package ingest

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/viewcount/viewcount"
)

// Sample is what ingest makes of one request when nothing is published: the
// events the validators would receive, or the status and message the
// client would get instead.
type Sample struct {
	Status int               `json:"status"`
	Error  string            `json:"error,omitempty"`
	Events []viewcount.Event `json:"-"`
}

// SampleRequest runs r through the pixel or the beacon as a Handler built
// with cfg would take it from a client at ip, and keeps the events instead
// of publishing them. It answers "what would the rules see of this
// request?" for an operator, so it goes through the same routes, parsing
// and normalisation as a real hit; only the rate limit is left out (a
// sample is no traffic) and the metrics are its own. salts is the serving
// salt source, so the visitor and network ids are today's.
func SampleRequest(cfg Config, salts SaltSource, r *http.Request, ip netip.Addr, logger *slog.Logger, now func() time.Time) Sample {
	cfg.Limiter = nil
	var keep keeper
	h := New(cfg, &keep, salts, viewcount.NewMetrics(), logger, now)
	engine := gin.New()
	// No proxy is trusted: the client is the address given, whatever
	// X-Forwarded-For the sample carries.
	_ = engine.SetTrustedProxies(nil)
	h.Routes(engine)
	r.RemoteAddr = netip.AddrPortFrom(ip, 1).String()
	if !ip.IsValid() {
		r.RemoteAddr = ""
	}
	w := httptest.NewRecorder()
	engine.ServeHTTP(w, r)
	s := Sample{Status: w.Code, Events: keep.evs}
	if w.Code >= 300 {
		s.Error = http.StatusText(w.Code)
		if strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
			body, _ := io.ReadAll(io.LimitReader(w.Body, 4096))
			s.Error = strings.TrimSpace(string(body))
		}
	}
	return s
}

// keeper is the EventPublisher of a sample: it keeps what it is given.
type keeper struct {
	mu  sync.Mutex
	evs []viewcount.Event
}

// Publish keeps evs; a sample has no place in the stream.
func (k *keeper) Publish(_ context.Context, evs []viewcount.Event) (viewcount.StreamPosition, error) {
	k.mu.Lock()
	k.evs = append(k.evs, evs...)
	k.mu.Unlock()
	return viewcount.StreamPosition{}, nil
}

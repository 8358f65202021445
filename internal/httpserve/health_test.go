package httpserve

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/viewcount/viewcount"
)

// fixture is an engine with only the health routes, as a lone ingest or
// validate process serves them.
type fixture struct {
	srv  http.Handler
	mets *viewcount.Metrics
}

func newFixture(t *testing.T, checks map[string]Checker) *fixture {
	t.Helper()
	f := &fixture{mets: viewcount.NewMetrics()}
	e, err := NewEngine(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	Health(e, checks, f.mets)
	f.srv = e
	return f
}

func (f *fixture) get(t *testing.T, path string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	f.srv.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
	return w
}

func TestReadyz(t *testing.T) {
	f := newFixture(t, map[string]Checker{
		"stream": func(context.Context) error { return nil },
		"store":  func(context.Context) error { return errors.New("store: connection refused") },
	})
	w := f.get(t, "/readyz")
	if w.Code != 503 || !strings.Contains(w.Body.String(), `"store":"store: connection refused"`) {
		t.Fatalf("readyz: %d %s", w.Code, w.Body)
	}
	if w := f.get(t, "/healthz"); w.Code != 200 {
		t.Fatalf("healthz: %d", w.Code)
	}
	w = f.get(t, "/metrics")
	if w.Code != 200 || !strings.Contains(w.Body.String(), `viewcount_events_validated_total{verdict="bot_ua"} 0`) {
		t.Fatalf("metrics: %d %s", w.Code, w.Body)
	}
}

// TestReadyzReportsParts: a part that reports itself failing (a partition
// not progressing) makes /readyz 503 with its reason, and the gauge shows it;
// once it reports healthy again, readiness comes back without a restart.
func TestReadyzReportsParts(t *testing.T) {
	f := newFixture(t, map[string]Checker{"stream": func(context.Context) error { return nil }})
	f.mets.SetHealth("partition/0", errors.New("no progress for 2m0s with 120 messages pending"))
	f.mets.SetHealth("store", nil)
	w := f.get(t, "/readyz")
	if w.Code != 503 || !strings.Contains(w.Body.String(), `"partition/0":"no progress for 2m0s with 120 messages pending"`) {
		t.Fatalf("readyz: %d %s", w.Code, w.Body)
	}
	m := f.get(t, "/metrics").Body.String()
	if !strings.Contains(m, `viewcount_healthy{part="partition/0"} 0`) || !strings.Contains(m, `viewcount_healthy{part="store"} 1`) {
		t.Fatalf("metrics lack the health gauges:\n%s", m)
	}
	f.mets.SetHealth("partition/0", nil)
	if w := f.get(t, "/readyz"); w.Code != 200 {
		t.Fatalf("readyz after recovery: %d %s", w.Code, w.Body)
	}
}

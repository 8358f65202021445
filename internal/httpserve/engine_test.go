package httpserve

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

// TestRecoveryOutputHasNoAddress: a panic whose error names a client's
// address (a broken pipe's net.OpError does) is printed by gin's recovery
// without it.
func TestRecoveryOutputHasNoAddress(t *testing.T) {
	var out bytes.Buffer
	e, err := newEngine(nil, nil, &out)
	if err != nil {
		t.Fatal(err)
	}
	e.GET("/boom", func(*gin.Context) {
		panic(errors.New("write tcp 10.0.0.5:8080->203.0.113.77:51544: write: connection timed out"))
	})
	w := httptest.NewRecorder()
	e.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/boom", nil))
	if w.Code != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500", w.Code)
	}
	if !strings.Contains(out.String(), "panic recovered") || strings.Contains(out.String(), "203.0.113.77") {
		t.Fatalf("recovery output names the client or printed nothing:\n%s", out.String())
	}
}

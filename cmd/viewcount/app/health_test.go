package app

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

func TestReadyURL(t *testing.T) {
	f := func(listen, want string) {
		t.Helper()
		got, err := readyURL(listen)
		if err != nil {
			got = "error"
		}
		if got != want {
			t.Errorf("readyURL(%q) = %q, want %q", listen, got, want)
		}
	}
	f(":8080", "http://127.0.0.1:8080/readyz")
	f("0.0.0.0:8081", "http://127.0.0.1:8081/readyz")
	f("[::]:8082", "http://127.0.0.1:8082/readyz")
	f("10.0.0.5:9000", "http://10.0.0.5:9000/readyz")
	f("[::1]:8080", "http://[::1]:8080/readyz")
	f("127.0.0.1:0", "error")
	f("8080", "error")
}

// TestHealth: `viewcount health` succeeds on 200 only, and prints the
// answer (which names the failing parts) either way.
func TestHealth(t *testing.T) {
	var status atomic.Int32
	status.Store(http.StatusOK)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(int(status.Load()))
		if status.Load() == http.StatusOK {
			w.Write([]byte(`{"status":"ready"}`))
		} else {
			w.Write([]byte(`{"status":"unavailable","failed":{"stream":"no quorum"}}`))
		}
	}))
	defer srv.Close()

	var out bytes.Buffer
	if err := Run([]string{"health", srv.URL + "/readyz"}, &out, &out); err != nil || out.String() != "{\"status\":\"ready\"}\n" {
		t.Errorf("ready: err %v, output %q", err, out.String())
	}
	status.Store(http.StatusServiceUnavailable)
	out.Reset()
	err := Run([]string{"health", srv.URL + "/readyz"}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(out.String(), "no quorum") {
		t.Errorf("unavailable: err %v, output %q: want an error and the failing part", err, out.String())
	}
	// The default URL comes from VIEWCOUNT_LISTEN, as in the image.
	status.Store(http.StatusOK)
	t.Setenv("VIEWCOUNT_LISTEN", strings.TrimPrefix(srv.URL, "http://"))
	out.Reset()
	if err := Run([]string{"health"}, &out, &out); err != nil {
		t.Errorf("default URL from VIEWCOUNT_LISTEN %s: %v", srv.URL, err)
	}
	if err := Run([]string{"health", "a", "b"}, &out, &out); err == nil {
		t.Error("two URLs: no error")
	}
}

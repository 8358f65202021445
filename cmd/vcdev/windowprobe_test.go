package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The probe's pages report each moment's window; what is not a moment is
// refused, and the report counts 0 × 0 per moment.
func TestWindowProbeReports(t *testing.T) {
	p := newWindowProbe(3, 1234)
	post := func(body string) int {
		w := httptest.NewRecorder()
		p.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/report", strings.NewReader(body)))
		return w.Code
	}
	for _, b := range []string{"start 0x0", "start 780x580", "frame 780x580", "frame 780x580"} {
		if c := post(b); c != http.StatusOK {
			t.Fatalf("%q: %d", b, c)
		}
	}
	if c := post("later 1x1"); c != http.StatusBadRequest {
		t.Errorf("an unknown moment: %d", c)
	}
	w := httptest.NewRecorder()
	p.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/probe?n=0", nil))
	if !strings.Contains(w.Body.String(), "requestAnimationFrame") || !strings.Contains(w.Body.String(), ":1234/probe?n=") {
		t.Errorf("probe page: %s", w.Body)
	}
	var out bytes.Buffer
	p.report(&out)
	for _, want := range []string{"start     2 pages,    1 read 0x0 (0x0: 1, 780x580: 1)", "frame     2 pages,    0 read 0x0 (780x580: 2)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	if post("end 1x1"); !isClosed(p.done) {
		t.Error("end did not finish the probe")
	}
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// Headless Chromium through the probe: every page reports both moments,
// and at its first frame none reads 0 × 0.
func TestWindowProbeChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium; the system lane runs it")
	}
	exe, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium not on PATH, and CI is set")
		}
		t.Skip("chromium not on PATH")
	}
	// Not t.TempDir: a helper process that outlives the kill by a moment
	// must not fail the test by writing into the profile as it is removed.
	profile, err := os.MkdirTemp("", "vcdev-probe-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(profile) })
	args := []string{"--loads", "6", "--", exe, "--headless=new", "--no-first-run", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir=" + profile}
	if os.Geteuid() == 0 {
		args = append(args, "--no-sandbox")
	}
	var out, errOut bytes.Buffer
	if err := run(append([]string{"window-probe"}, args...), &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	t.Log(out.String())
	if !strings.Contains(out.String(), "frame     6 pages,    0 read 0x0") || !strings.Contains(out.String(), "start     6 pages,") {
		t.Errorf("want 6 pages at both moments, none 0 × 0 at the frame:\n%s%s", out.String(), errOut.String())
	}
}

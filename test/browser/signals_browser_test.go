//go:build linux && !race

package browser

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/test/apptest"
)

// TestBrowsersCounted measures the header rule's false positives on real
// browsers and its catch on scripts, through the whole process (embedded
// NATS and chDB). A page on the site's own host, http://signals.example
// (the browsers resolve it to loopback and treat it as a secure context:
// vc.js sends nothing from localhost itself, and a page on another host
// is foreign_origin), embeds the pixel <img> and vc.js from viewcount on
// http://127.0.0.1 (another site; loopback, so the browsers treat the
// requests as secure and send everything they send over https):
//
//   - headful Chromium and headful Firefox ESR under Xvfb, launched as a
//     person would (no automation protocol, fresh profile): both of their
//     views (the pixel and the beacon) count;
//   - headless Chromium (--headless=new) loading the same page is rejected
//     (bot_ua: its user agent says HeadlessChrome). Given a browser's user
//     agent instead it sends exactly headful Chromium's headers, so no
//     header flag can tell it: its beacon is headless by the 800 × 600
//     screen it reports, its pixel counts;
//   - curl, Python's urllib and Go's net/http sending the pixel with
//     Chrome's user agent are rejected as header_mismatch.
//
// It needs chromium, firefox-esr and Xvfb (.ci/run installs them): without
// them it skips, except in CI, where it fails.
func TestBrowsersCounted(t *testing.T) {
	chromium := requireTool(t, "chromium", "chromium-browser")
	firefox := requireTool(t, "firefox-esr", "firefox")
	display := startXvfb(t, requireTool(t, "Xvfb"))

	m := apptest.Start(t, t.TempDir(), apptest.NewDB())
	c := apptest.NewClient(t, m)
	const site = "signals.example"
	c.AddSite(site)
	vc := "http://" + m.Addr() // 127.0.0.1:port
	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/b/")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>%s</title><img src="%s/p.gif?site=%s&page=/img/%s" alt="">`+
			`<script defer src="%s/vc.js" data-site="%s"></script><p>%s</p>`, name, vc, site, name, vc, site, name)
	}))
	t.Cleanup(pages.Close)
	origin := strings.Replace(pages.URL, "127.0.0.1", site, 1)
	pageURL := func(name string) string { return origin + "/b/" + name }

	// The browsers, all at once: they take seconds to start on a busy box.
	xenv := []string{"DISPLAY=" + display}
	chromiumArgs := []string{"--no-first-run", "--no-default-browser-check", "--disable-gpu", "--password-store=basic",
		"--host-resolver-rules=MAP " + site + " 127.0.0.1", "--unsafely-treat-insecure-origin-as-secure=" + origin}
	if os.Geteuid() == 0 {
		chromiumArgs = append(chromiumArgs, "--no-sandbox") // Chromium refuses root with its sandbox on
	}
	launch(t, xenv, chromium, append(chromiumArgs, "--user-data-dir="+t.TempDir(), pageURL("chromium"))...)
	launch(t, append(xenv, "HOME="+t.TempDir()), firefox, "--new-instance", "--profile", firefoxProfile(t, site), pageURL("firefox"))
	launch(t, nil, chromium, append(chromiumArgs, "--headless=new", "--user-data-dir="+t.TempDir(), pageURL("headless"))...)
	// The user agent of a current Chrome.
	const ua = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"
	// Stealthy: headless Chromium wearing that user agent.
	launch(t, nil, chromium, append(chromiumArgs, "--headless=new", "--user-agent="+ua, "--user-data-dir="+t.TempDir(), pageURL("stealth"))...)

	// The scripts, with that user agent.
	pixel := func(name string) string { return vc + "/p.gif?site=" + site + "&page=/script/" + name }
	scripts := map[string][]string{
		"curl":   {"curl", "-s", "-o", "/dev/null", "-A", ua, pixel("curl")},
		"urllib": {"python3", "-c", `import sys, urllib.request as u; u.urlopen(u.Request(sys.argv[1], headers={"User-Agent": sys.argv[2]})).read()`, pixel("urllib"), ua},
	}
	want := map[string]string{ // page → verdict
		"/b/chromium": "valid", "/img/chromium": "valid",
		"/b/firefox": "valid", "/img/firefox": "valid",
		"/b/headless": "bot_ua", "/img/headless": "bot_ua",
		// The beacon reports its 800 × 600 screen; its pixel, with headful
		// Chromium's headers and user agent, has nothing to tell it by.
		"/b/stealth": "headless", "/img/stealth": "valid",
		"/script/go": "header_mismatch",
	}
	for name, argv := range scripts {
		if _, err := exec.LookPath(argv[0]); err != nil {
			t.Logf("%s not installed: not sent", argv[0])
			continue
		}
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		want["/script/"+name] = "header_mismatch"
	}
	req, _ := http.NewRequest("GET", pixel("go"), nil)
	req.Header.Set("User-Agent", ua)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	// Every page's view, with its flags and verdict.
	var got map[string]string
	var flags map[string]uint64
	apptest.Eventually(t, 50*time.Second, func() string {
		res, err := m.Store.Query(context.Background(), queries.Text("raw_signals"), store.Params{"site": site})
		if err != nil {
			return err.Error()
		}
		got, flags = map[string]string{}, map[string]uint64{}
		for _, r := range res.TextRows() { // page, browser, req_flags, asn, verdict
			got[r[0]] = r[4]
			flags[r[0]], _ = strconv.ParseUint(r[2], 10, 16)
		}
		for page := range want {
			if _, ok := got[page]; !ok {
				return fmt.Sprintf("no view of %s yet; have %v", page, got)
			}
		}
		return ""
	})
	for _, page := range slices.Sorted(maps.Keys(flags)) {
		t.Logf("%-14s %-16s flags %#x %s", page, got[page], flags[page], viewcount.HeaderFlags(flags[page]))
	}
	if len(got) != len(want) {
		t.Errorf("views of %d pages, want %d: %v", len(got), len(want), got)
	}
	for page, verdict := range want {
		if got[page] != verdict {
			t.Errorf("%s: %s, want %s (flags %#x)", page, got[page], verdict, flags[page])
		}
	}
	// What the browsers sent, as flags: Chromium everything, Firefox all
	// but client hints (it has none).
	const (
		all    = viewcount.HeadersSeen | viewcount.HeaderSecure | viewcount.HeaderFetchMeta | viewcount.HeaderFetchFits | viewcount.HeaderAccept | viewcount.HeaderAcceptLanguage
		chrome = all | viewcount.HeaderClientHints | viewcount.HeaderHintsAgree
		bare   = viewcount.HeadersSeen | viewcount.HeaderSecure
		gecko  = all
	)
	for page, f := range map[string]viewcount.HeaderFlags{"/b/chromium": chrome, "/img/chromium": chrome,
		"/b/firefox": gecko, "/img/firefox": gecko, "/script/go": bare} {
		if viewcount.HeaderFlags(flags[page]) != f {
			t.Errorf("%s: flags %#x, want %#x", page, flags[page], f)
		}
	}
}

// requireTool finds the first of names on PATH; without one the test is
// skipped, except in CI, where .ci/run installs them.
func requireTool(t *testing.T, names ...string) string {
	t.Helper()
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s not on PATH, and CI is set: the browser test must run (apt-get install chromium firefox-esr xvfb)", names[0])
	}
	t.Skipf("%s not on PATH (apt-get install chromium firefox-esr xvfb); CI runs this test", names[0])
	return ""
}

// startXvfb starts a virtual X server on a free display and returns its
// name (":N"); Xvfb picks the number and writes it to -displayfd.
func startXvfb(t *testing.T, path string) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command(path, "-displayfd", "3", "-screen", "0", "1280x800x24", "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start Xvfb: %v", err)
	}
	w.Close()
	t.Cleanup(func() { stop(cmd) })
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(r).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case n := <-line:
		if n == "" {
			t.Fatal("Xvfb exited without a display")
		}
		return ":" + n
	case <-time.After(15 * time.Second):
		t.Fatal("Xvfb did not report a display in 15s")
	}
	return ""
}

// launch starts a browser in its own process group, so that stopping it
// stops its helper processes too; output is shown only if the test fails.
func launch(t *testing.T, env []string, path string, args ...string) {
	t.Helper()
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	t.Cleanup(func() {
		stop(cmd)
		if t.Failed() {
			t.Logf("%s output (tail):\n%s", filepath.Base(path), tail(out.String(), 2000))
		}
	})
}

// stop kills the process group cmd leads and reaps its leader.
func stop(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Wait()
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// firefoxProfile is a fresh profile that skips first-run pages and
// background chatter, which would only slow the page down, and resolves
// host to loopback as a secure context.
func firefoxProfile(t *testing.T, host string) string {
	t.Helper()
	dir := t.TempDir()
	prefs := []string{
		`user_pref("browser.shell.checkDefaultBrowser", false);`,
		`user_pref("browser.aboutwelcome.enabled", false);`,
		`user_pref("browser.startup.homepage_override.mstone", "ignore");`,
		`user_pref("datareporting.policy.dataSubmissionEnabled", false);`,
		`user_pref("toolkit.telemetry.reportingpolicy.firstRun", false);`,
		`user_pref("app.update.enabled", false);`,
		`user_pref("network.dns.localDomains", "` + host + `");`,
		`user_pref("dom.securecontext.allowlist", "` + host + `");`,
	}
	if err := os.WriteFile(filepath.Join(dir, "user.js"), []byte(strings.Join(prefs, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

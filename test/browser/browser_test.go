//go:build !race

package browser

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/viewcount/viewcount/test/apptest"
)

// browser is one headless Chromium tab and what its pages wrote to the
// console as errors (exceptions, CSP violations, failed scripts).
type browser struct {
	ctx    context.Context
	mu     sync.Mutex
	errors []string
}

// chromiumPath finds Chromium: $VIEWCOUNT_CHROMIUM, else Debian's chromium
// (.ci/run installs it), else another name on PATH.
func chromiumPath() string {
	if p := os.Getenv("VIEWCOUNT_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// requireChromium returns Chromium's path; without one the test is skipped,
// except in CI, where a missing browser is a failure.
func requireChromium(t *testing.T) string {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium not found (CI is set, so the browser test must run): apt-get install chromium, or set VIEWCOUNT_CHROMIUM")
		}
		t.Skip("chromium not found; apt-get install chromium or set VIEWCOUNT_CHROMIUM")
	}
	return path
}

// newBrowser starts headless Chromium with a desktop Chrome user agent, so
// the validators judge its views by what the page reports (webdriver), not
// by the "HeadlessChrome" in its default user agent. Names under .example
// and .test resolve to 127.0.0.1, so a test's pages can be on its site's
// own host. The tab's actions must be done within 4 minutes of its start.
func newBrowser(t *testing.T, width, height int) *browser {
	t.Helper()
	path := requireChromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserAgent(apptest.ChromeUA),
		chromedp.WindowSize(width, height),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("host-resolver-rules", "MAP *.example 127.0.0.1, MAP *.test 127.0.0.1"),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses root with its sandbox on
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	ctx, cancelTime := context.WithTimeout(ctx, 4*time.Minute)
	t.Cleanup(func() { cancelTime(); cancelTab(); cancelAlloc() })
	b := &browser{ctx: ctx}
	messages := chromedp.Console(ctx)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium %s: %v", path, err)
	}
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			// A 401 or 404 the page asked for and handled is logged by the
			// network layer; what counts is script errors and policy blocks.
			if (m.Type == chromedp.ConsoleError || m.IsException()) && m.Source != "network" {
				b.mu.Lock()
				b.errors = append(b.errors, m.String()+" ("+m.URL+")")
				b.mu.Unlock()
			}
		}
	}()
	return b
}

func (b *browser) do(t *testing.T, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func evalJS[T any](t *testing.T, b *browser, js string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// until polls a JavaScript condition in the page (30 s at most).
func untilJS(js string, opts ...chromedp.PollOption) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		// A poll started while a navigation replaces the page's execution
		// context fails with "Cannot find context with specified id" (seen
		// under load right after Navigate): poll again in the new one.
		for attempt := 0; ; attempt++ {
			_, err := chromedp.Poll[bool](js, append([]chromedp.PollOption{chromedp.WithPollingTimeout(30 * time.Second)}, opts...)...)(ctx, t)
			if err == nil || attempt == 5 || !strings.Contains(err.Error(), "Cannot find context") {
				return chromedp.Void{}, err
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// consoleErrors returns the errors logged so far and forgets them.
func (b *browser) consoleErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.errors
	b.errors = nil
	return e
}

// screenshot saves the whole page as PNG into $VIEWCOUNT_SCREENSHOT_DIR (or
// the test's temp dir) and returns the path.
func (b *browser) screenshot(t *testing.T, name string) string {
	t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	dir := os.Getenv("VIEWCOUNT_SCREENSHOT_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(png))
	return path
}

// allowDownloads has the tab save downloads into a new temporary
// directory, which it returns.
func (b *browser) allowDownloads(t *testing.T) string {
	t.Helper()
	dl := t.TempDir()
	if _, err := chromedp.Call(b.ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
		Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dl,
	}); err != nil {
		t.Fatalf("allow downloads: %v", err)
	}
	return dl
}

// waitLoaded waits until the dashboard finished a load newer than prev
// (body[data-load] counts loads) and returns its number.
func (b *browser) waitLoaded(t *testing.T, prev string) string {
	t.Helper()
	js := `document.body.dataset.state === 'ready' && (document.body.dataset.load || '') !== '` + prev + `'`
	if err := chromedp.Do(b.ctx, untilJS(js)); err != nil {
		state := evalJS[string](t, b, `document.body.dataset.state + ': ' + document.getElementById('error').textContent`)
		t.Fatalf("dashboard did not finish loading: %v (state %s)", err, state)
	}
	return evalJS[string](t, b, `document.body.dataset.load`)
}

// rows reads a table's body as text cells.
func tableRows(t *testing.T, b *browser, sel string) [][]string {
	t.Helper()
	return evalJS[[][]string](t, b, `Array.from(document.querySelectorAll(`+jsString(sel+` tbody tr`)+`)).map(tr => Array.from(tr.cells).map(c => c.textContent.trim()))`)
}

func elemText(t *testing.T, b *browser, id string) string {
	t.Helper()
	return evalJS[string](t, b, `document.getElementById(`+jsString(id)+`).textContent.trim()`)
}

func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

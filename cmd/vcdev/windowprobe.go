package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

const windowProbeUsage = `usage: vcdev window-probe [--loads N] [--timeout D] -- BROWSER [ARGS...]

Starts BROWSER ARGS... on a page that reads window.outerWidth × outerHeight
at script start and at the page's first animation frame, then navigates
itself to the next page, alternately on 127.0.0.1 and localhost (another
site: a new document in a new renderer), N times. Prints, for each moment,
how many pages reported 0 × 0 and the sizes seen. What the 0 × 0 window
rule's removal was measured with (docs/invalid-traffic.md); e.g.

  vcdev window-probe --loads 200 -- chromium --headless=new --no-sandbox --user-data-dir=$(mktemp -d)
  DISPLAY=:1 vcdev window-probe -- firefox-esr --new-instance --profile $(mktemp -d)
`

func runWindowProbe(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("window-probe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, windowProbeUsage); fs.PrintDefaults() }
	loads := fs.Int("loads", 100, "pages to load")
	timeout := fs.Duration("timeout", 0, "give up after this long (0 = 2 s a page plus 30 s)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	browser := fs.Args()
	if len(browser) == 0 || *loads < 1 {
		fs.Usage()
		return errors.New("window-probe: want --loads ≥ 1 and a browser command after --")
	}
	if *timeout <= 0 {
		*timeout = time.Duration(*loads)*2*time.Second + 30*time.Second
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("window-probe: listen: %w", err)
	}
	p := newWindowProbe(*loads, ln.Addr().(*net.TCPAddr).Port)
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // ends with Close below
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	cmd := exec.Command(browser[0], append(browser[1:], fmt.Sprintf("http://127.0.0.1:%d/probe?n=0", p.port))...)
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("window-probe: start %s: %w", browser[0], err)
	}
	defer killGroup(cmd)
	select {
	case <-p.done:
	case <-ctx.Done():
		fmt.Fprintf(stderr, "window-probe: gave up after %s\n", *timeout)
	}
	p.report(stdout)
	return nil
}

// windowProbe serves the probe pages and gathers what they report.
type windowProbe struct {
	loads, port int
	mu          sync.Mutex
	seen        map[string]map[string]int // moment → "W×H" → pages
	once        sync.Once
	done        chan struct{}
}

func newWindowProbe(loads, port int) *windowProbe {
	return &windowProbe{loads: loads, port: port, seen: map[string]map[string]int{}, done: make(chan struct{})}
}

// moments are when the page reads its window, in the order reported.
var moments = []string{"start", "frame"}

func (p *windowProbe) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/probe":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>window probe</title><script>
var n = +new URLSearchParams(location.search).get('n');
function report(moment) {
  var x = new XMLHttpRequest();
  x.open('POST', '/report', false);
  x.send(moment + ' ' + outerWidth + 'x' + outerHeight);
}
report('start');
requestAnimationFrame(function () {
  report('frame');
  if (n + 1 >= %d) return report('end');
  location.href = 'http://' + ['127.0.0.1', 'localhost'][(n + 1) %% 2] + ':%d/probe?n=' + (n + 1);
});
</script><p>window probe</p>`, p.loads, p.port)
	case "/report":
		b, _ := io.ReadAll(io.LimitReader(r.Body, 100))
		moment, size, _ := strings.Cut(string(b), " ")
		if moment == "end" {
			p.once.Do(func() { close(p.done) })
			return
		}
		if !slices.Contains(moments, moment) {
			http.Error(w, "unknown moment", http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		if p.seen[moment] == nil {
			p.seen[moment] = map[string]int{}
		}
		p.seen[moment][size]++
		p.mu.Unlock()
	default:
		http.NotFound(w, r)
	}
}

func (p *windowProbe) report(w io.Writer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(w, "%d pages asked for\n", p.loads)
	for _, m := range moments {
		sizes := p.seen[m]
		total := 0
		for _, n := range sizes {
			total += n
		}
		var parts []string
		for _, s := range slices.Sorted(maps.Keys(sizes)) {
			parts = append(parts, fmt.Sprintf("%s: %d", s, sizes[s]))
		}
		fmt.Fprintf(w, "%-6s %4d pages, %4d read 0x0 (%s)\n", m, total, sizes["0x0"], strings.Join(parts, ", "))
	}
}

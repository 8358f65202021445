package dashboard

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/viewcount/viewcount"
)

//go:embed assets
var assets embed.FS

// CSP is the dashboard page's Content-Security-Policy: scripts, styles and
// requests from its own origin only, no inline script or style, no frames,
// no plugins, no form posts. The page renders text with textContent only, so
// even a hostile page path in a table cannot become markup; the policy is
// the second line of defence for the token the tab keeps.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// StaticPrefix is where the page's files are served.
const StaticPrefix = "/dashboard/static/"

type file struct {
	body  []byte
	gz    []byte // body gzipped; nil when that would not be smaller
	ctype string
	etag  string
}

// Handler serves the dashboard page and its files from memory, gzipped
// once at start for the clients that take it (a page load's transfer is
// then about a third of its bytes: TestTransferSize).
type Handler struct {
	page  file
	files map[string]file // by path under assets/
	// EmbedOrigins, when set, gives the origins a site allows to show its
	// dashboard in a frame (viewcount.Site.EmbedOrigins): its page's
	// frame-ancestors. None (an unknown site, an error): no frame may, as
	// without it, so the page still says nothing of which sites exist.
	EmbedOrigins func(ctx context.Context, site string) []string
}

// New loads the embedded files. The page names its files with a version
// (a hash of them all), so a browser may cache them for long and still
// never runs a new page with an old script.
func New() (*Handler, error) {
	h := &Handler{files: map[string]file{}}
	all := sha256.New()
	err := fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := assets.ReadFile(p)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(p, "assets/")
		if path.Ext(name) == ".js" && !strings.HasPrefix(name, "vendor/") {
			b = dropCommentLines(b)
		}
		sum := sha256.Sum256(b)
		all.Write([]byte(name))
		all.Write(sum[:])
		ctype := mime.TypeByExtension(path.Ext(name))
		if ctype == "" {
			ctype = "text/plain; charset=utf-8"
		}
		h.files[name] = file{body: b, gz: gzipped(b), ctype: ctype, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("dashboard: read embedded assets: %w", err)
	}
	index, ok := h.files["index.html"]
	if !ok {
		return nil, fmt.Errorf("dashboard: embedded assets lack index.html")
	}
	delete(h.files, "index.html")
	version := hex.EncodeToString(all.Sum(nil)[:6])
	page := bytes.ReplaceAll(index.body, []byte("{{version}}"), []byte(version))
	h.page = file{body: page, gz: gzipped(page), ctype: "text/html; charset=utf-8"}
	return h, nil
}

// dropCommentLines leaves out the lines of our scripts that hold only a
// // comment: they explain the code to its readers, and are a seventh of
// what a browser would download (TestTransferSize). Only whole lines go,
// so no token moves; the scripts hold no string that spans lines
// (TestScriptsKeepCommentLinesOut checks both).
func dropCommentLines(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for line := range bytes.Lines(b) {
		if !bytes.HasPrefix(bytes.TrimLeft(line, " \t"), []byte("//")) {
			out = append(out, line...)
		}
	}
	return out
}

// gzipped is b gzipped at the best compression, nil unless that is smaller.
func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // a valid level: no error
	_, _ = zw.Write(b)                                       // a bytes.Buffer does not fail
	_ = zw.Close()
	if buf.Len() >= len(b) {
		return nil
	}
	return buf.Bytes()
}

// acceptsGzip reads an Accept-Encoding header: gzip (or *) listed without
// q=0.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(part, ";")
		name = strings.ToLower(strings.TrimSpace(name))
		if name != "gzip" && name != "*" {
			continue
		}
		q, ok := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q=")
		if !ok || strings.Trim(q, "0.") != "" {
			return true
		}
	}
	return false
}

// send writes f (gzipped if the client takes it) unless the client holds
// it already. A gzipped body is another representation: its ETag says so.
func send(c *gin.Context, f file) {
	hd := c.Writer.Header()
	body, etag, gz := f.body, f.etag, f.gz != nil && acceptsGzip(c.GetHeader("Accept-Encoding"))
	if f.gz != nil {
		hd.Set("Vary", "Accept-Encoding")
	}
	if gz {
		body = f.gz
		if etag != "" {
			etag = strings.TrimSuffix(etag, `"`) + `-gz"`
		}
	}
	if etag != "" {
		hd.Set("ETag", etag)
		if c.GetHeader("If-None-Match") == etag {
			c.Status(http.StatusNotModified)
			return
		}
	}
	if gz {
		hd.Set("Content-Encoding", "gzip")
	}
	c.Data(http.StatusOK, f.ctype, body)
}

// Routes registers GET /dashboard/{site} and the page's files.
func (h *Handler) Routes(r gin.IRouter) {
	r.GET("/dashboard/:site", h.servePage)
	r.GET(StaticPrefix+"*file", h.serveFile)
}

func (h *Handler) servePage(c *gin.Context) {
	raw := c.Param("site")
	site, err := viewcount.NormaliseSite(raw)
	if err != nil {
		c.JSON(http.StatusBadRequest, gin.H{"error": "site: not a domain name"})
		return
	}
	if site != raw {
		// One address per dashboard; the browser keeps the fragment (a
		// share token) across the redirect.
		to := "/dashboard/" + site
		if q := c.Request.URL.RawQuery; q != "" {
			to += "?" + q // the view (URL state)
		}
		c.Redirect(http.StatusMovedPermanently, to)
		return
	}
	hd := c.Writer.Header()
	hd.Set("X-Content-Type-Options", "nosniff")
	if origins := h.frameAncestors(c.Request.Context(), site); origins != "" {
		// X-Frame-Options has no allow-list; frame-ancestors replaces it.
		hd.Set("Content-Security-Policy", strings.TrimSuffix(CSP, "'none'")+origins)
	} else {
		hd.Set("Content-Security-Policy", CSP)
		hd.Set("X-Frame-Options", "DENY")
	}
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-cache")
	send(c, h.page)
}

// frameAncestors is the site's embed origins as CSP source expressions,
// "" for none. They are checked again here, though stored checked: what
// goes into a header must never add a directive to it.
func (h *Handler) frameAncestors(ctx context.Context, site string) string {
	if h.EmbedOrigins == nil {
		return ""
	}
	origins, err := viewcount.CheckEmbedOrigins(h.EmbedOrigins(ctx, site))
	if err != nil {
		return ""
	}
	return strings.Join(origins, " ")
}

func (h *Handler) serveFile(c *gin.Context) {
	f, ok := h.files[strings.TrimPrefix(c.Param("file"), "/")]
	if !ok {
		c.JSON(http.StatusNotFound, gin.H{"error": "not found"})
		return
	}
	hd := c.Writer.Header()
	hd.Set("X-Content-Type-Options", "nosniff")
	// The page asks for ?v=<version>: a new build asks for a new URL.
	hd.Set("Cache-Control", "public, max-age=86400")
	send(c, f)
}

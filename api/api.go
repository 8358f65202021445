package api

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	ginjson "github.com/gin-gonic/gin/codec/json"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/store"
)

// Registry is the site registry as the api uses it.
type Registry interface {
	Known(domain string) bool
	Add(ctx context.Context, domain string) (viewcount.Site, string, error)
	Get(ctx context.Context, domain string) (viewcount.Site, error)
	// Managing sites (api/sites.go); errors as internal/stream.Sites
	// documents (viewcount.ErrSiteUnknown, viewcount.ErrSiteExists, …).
	List(ctx context.Context) ([]viewcount.Site, error)
	RotateToken(ctx context.Context, domain string, keepShare bool) (token string, shared bool, err error)
	SetTimezone(ctx context.Context, domain, zone string) (viewcount.Site, error)
	SetHostnames(ctx context.Context, domain string, hosts []string) (viewcount.Site, error)
	SetEngagement(ctx context.Context, domain string, engagedAfter int, mode *viewcount.CountMode) (viewcount.Site, error)
	SetEmbedOrigins(ctx context.Context, domain string, origins []string) (viewcount.Site, error)
	CreateShare(ctx context.Context, domain string) (string, error)
	RevokeShare(ctx context.Context, domain string) error
	Delete(ctx context.Context, domain string) error
	// Quiesce waits for this process's inserts and feeds in flight (see
	// deleteSiteData).
	Quiesce()
}

// Store is the store as the api uses it: reads, and the statements that
// delete a site's data (api/sites.go).
type Store interface {
	Querier
	Exec(ctx context.Context, query string, params store.Params) error
}

// Config configures the api.
type Config struct {
	PublicLag  time.Duration // snapshot refresh period, stated in Cache-Control; default 10s
	AdminToken string        // bearer token for /v1/admin; required
	MaxPage    int           // longest page path accepted in a count query; default 2048
	RuleSets   RuleSets      // VC_RULES, for GET /v1/admin/rules; nil answers 503
	// Revalidator serves POST /v1/admin/revalidate; nil answers 503.
	Revalidator Revalidator
	// Corrector serves /v1/admin/corrections; nil answers 503.
	Corrector Corrector
	// Explainer serves /v1/admin/explain; nil answers 503.
	Explainer Explainer
}

// Server serves the api routes.
type Server struct {
	cfg      Config
	snap     *Snapshot
	q        Store
	sites    Registry
	logger   *slog.Logger
	normPage func(string) (string, error)
	now      func() time.Time

	// Header values of every count answer, built once: net/http only reads
	// them, and Header().Set or Add replace the slice rather than write into
	// it (cap == len), so one slice can serve every response.
	cacheControl []string
	jsonType     []string
}

// New returns a server reading counts from snap. normPage must be the same
// normalisation ingest applies, so /blog/ and /blog read the same count.
func New(cfg Config, snap *Snapshot, q Store, sites Registry, normPage func(string) (string, error), logger *slog.Logger, now func() time.Time) (*Server, error) {
	if cfg.AdminToken == "" {
		return nil, errors.New("api: an admin token is required")
	}
	if cfg.PublicLag <= 0 {
		cfg.PublicLag = 10 * time.Second
	}
	if cfg.MaxPage <= 0 {
		cfg.MaxPage = 2048
	}
	return &Server{cfg: cfg, snap: snap, q: q, sites: sites, normPage: normPage,
		logger: logger.With("component", "api"), now: now,
		cacheControl: []string{"public, max-age=" + strconv.Itoa(int(cfg.PublicLag.Seconds()))},
		jsonType:     []string{"application/json; charset=utf-8"}}, nil
}

// Routes registers the api endpoints.
func (s *Server) Routes(r gin.IRouter) {
	r.GET("/v1/sites/:site/count", s.count)
	r.OPTIONS("/v1/sites/:site/count", preflight(corsGetMethods))
	r.GET("/v1/sites/:site/counts", s.counts)
	r.POST("/v1/sites/:site/counts", s.counts)
	r.OPTIONS("/v1/sites/:site/counts", preflight(corsAllMethods))
	r.GET("/badge/:file", s.badge)
	r.GET("/badge/", s.badge) // a badge URL missing its site: an SVG saying so
	r.OPTIONS("/badge/:file", preflight(corsGetMethods))
	r.GET("/v1/sites/:site/invalid", s.invalid)
	r.POST("/v1/admin/sites", s.requireAdmin, s.addSite)
	r.GET("/v1/admin/rules", s.requireAdmin, s.ruleSets)
	r.POST("/v1/admin/revalidate", s.requireAdmin, s.revalidate)
	s.correctionRoutes(r)
	s.explainRoutes(r)
	s.siteRoutes(r)
}

type countResponse struct {
	Site    string `json:"site"`
	Page    string `json:"page,omitempty"`
	Views   uint64 `json:"views"`
	Uniques uint64 `json:"uniques"`
	AsOf    string `json:"as_of"`
	// Pending: events received by as_of not in views yet (see Count).
	Pending uint64 `json:"pending"`
}

// count answers from the snapshot without allocating on a hit: the answer is
// encoded once per reading (see reading.body), and the page is read straight
// from the raw query (viewcount.QueryValues) rather than through the map
// c.GetQuery would build.
func (s *Server) count(c *gin.Context) {
	allowAnyOrigin(c)
	site, err := viewcount.NormaliseSite(c.Param("site"))
	if err != nil {
		s.fail(c, errBadRequest("site: not a domain name"))
		return
	}
	var page string
	var q [1]string
	if viewcount.QueryValues(c.Request.URL.RawQuery, pageParam[:], q[:]) != 0 {
		if page, err = s.readPage(q[0]); err != nil {
			s.fail(c, err)
			return
		}
	}
	// No registry check: an unregistered site is read like a registered
	// one (see existence).
	r, err := s.snap.get(c.Request.Context(), site, page)
	if err != nil {
		s.fail(c, err)
		return
	}
	body := r.body.Load()
	if body == nil {
		// Concurrent first reads may both encode; they store the same bytes.
		b, err := countBody(site, page, r.Count)
		if err != nil {
			s.fail(c, err)
			return
		}
		r.body.Store(&b)
		body = &b
	}
	h := c.Writer.Header()
	h["Cache-Control"] = s.cacheControl
	h["Content-Type"] = s.jsonType
	c.Status(http.StatusOK)
	_, _ = c.Writer.Write(*body)
}

// existence: the public reads (/count, /counts, the badge) never consult
// the registry. An unregistered site has no valid views (its hits are
// judged unknown_site), so the snapshot reads zeros for it, exactly as for
// a registered site's page never viewed: the same answer, and the same
// work behind it (the first read of a key queries the store, later ones
// are map lookups), so neither the body nor its timing says which sites
// exist (TestPublicReadsSameWorkForUnknownSites). A shortcut for unknown
// sites answered them without the store query, 25 times faster than a
// registered site's first read: a timing oracle. The cost of a random
// site name is the cost of a random page of a real one, which any client
// could already ask for: a point query, shared by concurrent readers, and
// an entry in the bounded snapshot.

// countBody is the JSON answer for cnt of site+page. It goes through the
// encoder c.JSON uses, so the bytes are those c.JSON wrote before answers
// were cached (the golden files hold them).
func countBody(site, page string, cnt Count) ([]byte, error) {
	b, err := ginjson.API.Marshal(countResponse{Site: site, Page: page, Views: cnt.Views, Uniques: cnt.Uniques,
		AsOf: cnt.AsOf.UTC().Format(time.RFC3339), Pending: cnt.Pending})
	if err != nil {
		return nil, fmt.Errorf("api: encode count of %s%s: %w", site, page, err)
	}
	return b, nil
}

// pageParam is the one query parameter a count reads.
var pageParam = [...]string{"page"}

func (s *Server) requireAdmin(c *gin.Context) {
	token, ok := bearerToken(c.GetHeader("Authorization"))
	if !ok || subtle.ConstantTimeCompare([]byte(token), []byte(s.cfg.AdminToken)) != 1 {
		s.fail(c, errUnauthorized)
		c.Abort()
		return
	}
	c.Next()
}

// bearerToken returns the token of an Authorization header of the Bearer
// scheme. The scheme is case-insensitive and may be followed by more than
// one space (RFC 7235 section 2.1: auth-scheme 1*SP token68); clients
// and proxies that write "bearer" or pad the header must still get in.
func bearerToken(header string) (string, bool) {
	const scheme = "Bearer"
	if len(header) <= len(scheme) || !strings.EqualFold(header[:len(scheme)], scheme) ||
		(header[len(scheme)] != ' ' && header[len(scheme)] != '\t') {
		return "", false
	}
	token := strings.Trim(header[len(scheme):], " \t")
	return token, token != ""
}

func (s *Server) addSite(c *gin.Context) {
	var req struct {
		Domain string `json:"domain"`
	}
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, 4096)
	if err := c.ShouldBindJSON(&req); err != nil {
		s.fail(c, errBadRequest("body: want {\"domain\":\"example.com\"}"))
		return
	}
	site, token, err := s.sites.Add(c.Request.Context(), req.Domain)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.logger.Info("site registered", "site", site.Domain)
	c.JSON(http.StatusCreated, gin.H{"site": site.Domain, "token": token})
}

package stats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // site zones must load on hosts without a zoneinfo database

	"github.com/gin-gonic/gin"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/store"
)

// Querier runs the stats queries.
type Querier interface {
	Query(ctx context.Context, query string, params store.Params) (*store.Result, error)
}

// Zones gives a site's time zone (UTC when it has none).
type Zones interface {
	Zone(ctx context.Context, site string) (*time.Location, error)
}

// Config wires the API. Store, Auth, Zones and NormPage are required.
type Config struct {
	Store Querier
	// Auth checks the request's bearer token (site, admin or share token)
	// and returns the site; on failure it has answered the request itself.
	Auth func(*gin.Context) (site string, ok bool)
	// Zones gives each site's zone; ZoneNames adapts the site registry.
	Zones Zones
	// EngagedAfter gives a site's engaged-view threshold (viewcount.Site's
	// Engaged); nil reads viewcount.DefaultEngagedAfter for every site.
	EngagedAfter func(ctx context.Context, site string) (time.Duration, error)
	// NormPage is ingest's page normalisation, so ?page=/blog/ reads /blog.
	NormPage func(string) (string, error)
	// Lag is how far counting of a site is behind: the age of the oldest
	// of its events not counted yet, 0 when there is none (api.Snapshot's
	// Lag); nil reports 0.
	Lag    func(site string) time.Duration
	Now    func() time.Time // default time.Now
	Logger *slog.Logger
	// CacheBytes bounds the answer cache (see answerCache); 0 keeps no
	// answers. CacheTTL is how long an answer whose range is still
	// counting is served from it; default (and at most) the answers'
	// max-age.
	CacheBytes int64
	CacheTTL   time.Duration
	// SourceKinds maps a source name to its kind ("search", "social",
	// "email", "ai"; validate/judge.SourceKinds), which the channels
	// group by; nil knows none (every named source is then a Referral).
	SourceKinds map[string]string
}

// API serves the stats endpoints.
type API struct {
	cfg    Config
	logger *slog.Logger
	cache  *answerCache // nil: none
	// kindNames and kindOf are SourceKinds as the channel query's two
	// parameters, sorted by name.
	kindNames, kindOf string
}

// maxAge is the answers' Cache-Control max-age.
const maxAge = 10 * time.Second

// New checks cfg and returns the API.
func New(cfg Config) (*API, error) {
	if cfg.Store == nil || cfg.Auth == nil || cfg.Zones == nil || cfg.NormPage == nil {
		return nil, errors.New("stats: Store, Auth, Zones and NormPage are required")
	}
	if cfg.Lag == nil {
		cfg.Lag = func(string) time.Duration { return 0 }
	}
	if cfg.EngagedAfter == nil {
		cfg.EngagedAfter = func(context.Context, string) (time.Duration, error) { return viewcount.DefaultEngagedAfter, nil }
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	a := &API{cfg: cfg, logger: cfg.Logger.With("component", "stats")}
	names := slices.Sorted(maps.Keys(cfg.SourceKinds))
	kinds := make([]string, len(names))
	for i, n := range names {
		kinds[i] = cfg.SourceKinds[n]
	}
	a.kindNames, a.kindOf = store.ArrayParam(names), store.ArrayParam(kinds)
	if cfg.CacheBytes > 0 {
		ttl := cfg.CacheTTL
		if ttl <= 0 || ttl > maxAge {
			ttl = maxAge
		}
		a.cache = newAnswerCache(cfg.CacheBytes, ttl)
	}
	return a, nil
}

// Routes registers the endpoints under /v1/sites/:site/stats.
func (a *API) Routes(r gin.IRouter) {
	g := r.Group("/v1/sites/:site/stats")
	g.GET("/summary", a.handle(a.summary, true))
	g.GET("/timeseries", a.handle(a.timeseries, true))
	g.GET("/breakdown", a.handle(a.breakdown, true))
	g.GET("/realtime", a.handle(a.realtime, false)) // "now" is its point
	g.GET("/filtered", a.handle(a.filtered, true))
}

// request is what every endpoint starts from: the authorised site, its
// zone, the page filter and the query string.
type request struct {
	ctx  context.Context
	site string
	loc  *time.Location
	page string // normalised; "" = the whole site
	// filters, when there are any but one page's (which is page):
	// filter.go.
	filters []filter
	now     time.Time
	get     func(string) string
}

// answer is an endpoint's result: the JSON value and its CSV form, and
// the end of the range it counted (zero for none).
type answer struct {
	json    any
	header  []string
	rows    [][]string
	end     time.Time
	encoded []byte // json, encoded once by handle
}

// errParam is a bad request parameter: answered 400 with its message.
type errParam struct{ param, why string }

func (e *errParam) Error() string { return e.param + ": " + e.why }

func badParam(param, format string, args ...any) error {
	return &errParam{param, fmt.Sprintf(format, args...)}
}

func (a *API) handle(f func(*request) (*answer, error), cacheable bool) gin.HandlerFunc {
	cache := a.cache
	if !cacheable {
		cache = nil
	}
	return func(c *gin.Context) {
		site, ok := a.cfg.Auth(c)
		if !ok {
			return
		}
		req := &request{ctx: c.Request.Context(), site: site, now: a.cfg.Now().UTC(), get: c.Query}
		csv, err := wantCSV(c)
		if err == nil {
			err = a.prepare(req, c)
		}
		var (
			ans *answer
			key string
			hit bool
		)
		if err == nil && cache != nil {
			// The site's engaged_after is part of the key: a summary's, a
			// page ranking's and an engaged_views series' engaged views
			// count from it, and a site's owner may change it any time.
			var after time.Duration
			if after, err = a.cfg.EngagedAfter(req.ctx, site); err == nil {
				key = cacheKey(c.FullPath(), site, req.loc.String(), after, c.Request.URL.Query())
				ans, hit = cache.get(key, req.now)
			}
		}
		if err == nil && !hit {
			if ans, err = f(req); err == nil {
				ans.encoded, err = json.Marshal(ans.json)
			}
			if err == nil && cache != nil {
				settled := !ans.end.IsZero() && !ans.end.Add(a.cfg.Lag(site)+settleAfter).After(req.now)
				cache.put(key, ans, settled, req.now)
			}
		}
		if err != nil {
			a.fail(c, err)
			return
		}
		c.Header("Cache-Control", "private, max-age="+strconv.Itoa(int(maxAge/time.Second)))
		if csv {
			writeCSV(c, ans)
			return
		}
		c.Data(http.StatusOK, "application/json; charset=utf-8", ans.encoded)
	}
}

// prepare fills in the zone and the page filter.
func (a *API) prepare(req *request, c *gin.Context) error {
	loc, err := a.cfg.Zones.Zone(req.ctx, req.site)
	if err != nil {
		return fmt.Errorf("stats: zone of %s: %w", req.site, err)
	}
	req.loc = loc
	if raw, ok := c.GetQuery("page"); ok && raw != "" {
		if len(raw) > 2048 {
			return badParam("page", "longer than 2048 bytes")
		}
		if req.page, err = a.cfg.NormPage(raw); err != nil {
			return badParam("page", "%v", err)
		}
	}
	fs, err := parseFilters(c.QueryArray("filter"), a.cfg.NormPage)
	if err != nil || len(fs) == 0 {
		return err
	}
	if req.page != "" {
		fs = append(fs, filter{dim: "page", op: opIs, values: []string{req.page}, text: "page==" + escapeValue(req.page)})
		req.page = ""
	}
	if len(fs) == 1 && fs[0].dim == "page" && fs[0].op == opIs && len(fs[0].values) == 1 {
		// One page: the page's own reads, exact where they can be.
		req.page = fs[0].values[0]
		return nil
	}
	req.filters = fs
	return nil
}

func wantCSV(c *gin.Context) (bool, error) {
	switch f := c.Query("format"); f {
	case "csv":
		return true, nil
	case "json":
		return false, nil
	case "":
		return strings.Contains(c.GetHeader("Accept"), "text/csv"), nil
	default:
		return false, badParam("format", "want csv or json")
	}
}

// fail maps errors to answers: a bad parameter is the client's (400, the
// message names it); anything else is the store not answering, logged and
// answered 503 without detail.
func (a *API) fail(c *gin.Context, err error) {
	var pe *errParam
	if errors.As(err, &pe) {
		c.JSON(http.StatusBadRequest, gin.H{"error": pe.Error()})
		return
	}
	a.logger.Error("stats request failed", "route", c.FullPath(), "err", err)
	c.JSON(http.StatusServiceUnavailable, gin.H{"error": "temporarily unavailable; try again"})
}

// ZoneNames adapts a lookup of a site's IANA zone name ("" = UTC) to Zones,
// loading each name once. A name that does not load (the registry should
// never hold one) reads as UTC, logged, so a bad setting does not take the
// site's stats down.
func ZoneNames(name func(ctx context.Context, site string) (string, error), logger *slog.Logger) Zones {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &zoneCache{name: name, logger: logger.With("component", "stats")}
}

type zoneCache struct {
	name   func(ctx context.Context, site string) (string, error)
	logger *slog.Logger
	locs   sync.Map // zone name → *time.Location
}

func (z *zoneCache) Zone(ctx context.Context, site string) (*time.Location, error) {
	name, err := z.name(ctx, site)
	if err != nil {
		return nil, err
	}
	if name == "" || name == "UTC" {
		return time.UTC, nil
	}
	if l, ok := z.locs.Load(name); ok {
		return l.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		z.logger.Warn("site time zone does not load; using UTC", "site", site, "zone", name, "err", err)
		return time.UTC, nil
	}
	z.locs.Store(name, loc)
	return loc, nil
}

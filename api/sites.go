package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
)

// siteRoutes registers the endpoints that manage sites and share links.
func (s *Server) siteRoutes(r gin.IRouter) {
	r.GET("/v1/admin/sites", s.requireAdmin, s.listSites)
	r.GET("/v1/admin/sites/:site", s.requireAdmin, s.getSite)
	r.POST("/v1/admin/sites/:site/token", s.requireAdmin, s.rotateToken)
	r.PATCH("/v1/admin/sites/:site", s.requireAdmin, s.patchSite)
	r.DELETE("/v1/admin/sites/:site", s.requireAdmin, s.deleteSite)
	r.POST("/v1/sites/:site/share", s.createShare)
	r.DELETE("/v1/sites/:site/share", s.revokeShare)
	s.settingsRoutes(r)
}

// siteInfo is a site as the admin API shows it.
type siteInfo struct {
	Site     string `json:"site"`
	Created  string `json:"created"`
	Timezone string `json:"timezone"` // IANA name; "UTC" when none was set
	Shared   bool   `json:"shared"`   // a read-only share link is active
	// Hostnames are the page hosts the site's views may come from (the
	// default, its domain and subdomains, until set); HostnamesSince is
	// when the list took effect, null for the default.
	Hostnames      []string `json:"hostnames"`
	HostnamesSince *string  `json:"hostnames_since"`
	// EngagedAfter (seconds) and CountMode: docs/engagement.md.
	EngagedAfter int    `json:"engaged_after"`
	CountMode    string `json:"count_mode"`
	// EmbedOrigins may show the dashboard in a frame (docs/dashboard.md).
	EmbedOrigins []string `json:"embed_origins"`
}

func newSiteInfo(site viewcount.Site) siteInfo {
	tz := site.Timezone
	if tz == "" {
		tz = "UTC"
	}
	info := siteInfo{Site: site.Domain, Created: site.Created.UTC().Format(time.RFC3339), Timezone: tz, Shared: site.ShareHash != "",
		Hostnames: site.Hostnames(), EngagedAfter: int(site.Engaged() / time.Second), CountMode: site.CountMode.String(),
		EmbedOrigins: append([]string{}, site.EmbedOrigins...)}
	if n := len(site.Hosts); n > 0 && !site.Hosts[n-1].Since.IsZero() {
		since := site.Hosts[n-1].Since.UTC().Format(time.RFC3339Nano)
		info.HostnamesSince = &since
	}
	return info
}

// getSite answers GET /v1/admin/sites/{site}: the site as the list shows
// it, without the last view.
func (s *Server) getSite(c *gin.Context) {
	domain, ok := s.adminSite(c)
	if !ok {
		return
	}
	site, err := s.sites.Get(c.Request.Context(), domain)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, newSiteInfo(site))
}

type listedSite struct {
	siteInfo
	LastView *string `json:"last_view"` // minute of the newest valid view, null when none
}

// listSites answers GET /v1/admin/sites.
func (s *Server) listSites(c *gin.Context) {
	ctx := c.Request.Context()
	sites, err := s.sites.List(ctx)
	if err != nil {
		s.fail(c, err)
		return
	}
	last, err := s.lastViews(ctx)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]listedSite, len(sites))
	for i, site := range sites {
		out[i] = listedSite{siteInfo: newSiteInfo(site)}
		if t, ok := last[site.Domain]; ok {
			out[i].LastView = &t
		}
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, gin.H{"sites": out})
}

// lastViews returns each site's newest valid view minute, RFC 3339.
func (s *Server) lastViews(ctx context.Context) (map[string]string, error) {
	res, err := s.q.Query(ctx, queries.Text(queries.SitesLastView), nil)
	if err != nil {
		return nil, fmt.Errorf("api: last views: %w", err)
	}
	last := make(map[string]string, res.Len())
	for res.Next() {
		last[res.String("site")] = res.Time("last_view").UTC().Format(time.RFC3339)
	}
	if err := res.Err(); err != nil {
		return nil, fmt.Errorf("api: last views: %w", err)
	}
	return last, nil
}

// rotateToken answers POST /v1/admin/sites/{site}/token[?keep_share=true]
// with a new site token; the old one is refused from the next request on,
// and so is the site's share link unless keep_share: whoever held the old
// token could have made it. share_link says what became of the link:
// "revoked", "kept" or "none".
func (s *Server) rotateToken(c *gin.Context) {
	site, ok := s.adminSite(c)
	if !ok {
		return
	}
	keep := false
	if v, ok := c.GetQuery("keep_share"); ok {
		var err error
		if keep, err = strconv.ParseBool(v); err != nil {
			s.fail(c, errBadRequest("keep_share: want true or false"))
			return
		}
	}
	token, shared, err := s.sites.RotateToken(c.Request.Context(), site, keep)
	if err != nil {
		s.fail(c, err)
		return
	}
	link := "none"
	switch {
	case shared && keep:
		link = "kept"
	case shared:
		link = "revoked"
	}
	s.logger.Info("site token rotated", "site", site, "share_link", link)
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, gin.H{"site": site, "token": token, "share_link": link})
}

// patchSite answers PATCH /v1/admin/sites/{site} with any of
// {"timezone":"Europe/Berlin"}, {"hostnames":["example.com","*.example.com"]},
// {"engaged_after":10} and {"count_mode":"engaged"}: the site as stored
// (readSitePatch checks the body).
func (s *Server) patchSite(c *gin.Context) {
	site, ok := s.adminSite(c)
	if !ok {
		return
	}
	p, err := readSitePatch(c, adminFields)
	if err != nil {
		s.fail(c, err)
		return
	}
	updated, err := s.applySitePatch(c.Request.Context(), site, p)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, newSiteInfo(updated))
}

// deleteSite answers DELETE /v1/admin/sites/{site}?confirm={site}: the site
// leaves the registry and its rows leave every table with a site column.
// Without confirm it deletes nothing and answers 400 with what would go.
//
// The registry goes first, so the site's hits arriving meanwhile are
// judged unknown_site rather than counted. The deletes are waited for
// (sql/queries/site_delete.sql), so 200 means the rows are gone.
// Deleting again (a site no longer registered) deletes rows left behind:
// a delete cut short, or unknown_site hits recorded since; 404 when there
// is neither a registry entry nor a row.
func (s *Server) deleteSite(c *gin.Context) {
	site, err := viewcount.NormaliseSite(c.Param("site"))
	if err != nil {
		s.fail(c, errBadRequest("site: not a domain name"))
		return
	}
	ctx := c.Request.Context()
	confirm := c.Query("confirm")
	if confirm == "" {
		s.previewDelete(c, site)
		return
	}
	if got, err := viewcount.NormaliseSite(confirm); err != nil || got != site {
		s.fail(c, errBadRequest("confirm: must be the site's name, "+site))
		return
	}
	registered := true
	if err := s.sites.Delete(ctx, site); errors.Is(err, viewcount.ErrSiteUnknown) {
		registered = false
	} else if err != nil {
		s.fail(c, err)
		return
	}
	rows, err := s.deleteSiteData(ctx, site)
	if err != nil {
		s.fail(c, err)
		return
	}
	if !registered && total(rows) == 0 {
		s.fail(c, errNotFound("site not registered"))
		return
	}
	s.logger.Info("site deleted", "site", site, "was_registered", registered, "rows", total(rows))
	c.JSON(http.StatusOK, gin.H{"site": site, "deleted_rows": rows})
}

func (s *Server) previewDelete(c *gin.Context, site string) {
	ctx := c.Request.Context()
	_, err := s.sites.Get(ctx, site)
	registered := err == nil
	if err != nil && !errors.Is(err, viewcount.ErrSiteUnknown) {
		s.fail(c, err)
		return
	}
	rows, err := s.siteRows(ctx, site)
	if err != nil {
		s.fail(c, err)
		return
	}
	if !registered && total(rows) == 0 {
		s.fail(c, errNotFound("site not registered"))
		return
	}
	tables := make([]string, 0, len(rows))
	for t := range rows {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	var what strings.Builder
	if registered {
		what.WriteString("removes " + site + " from the registry (its token and share link stop working) and ")
	}
	what.WriteString("deletes its rows in every table (")
	for i, t := range tables {
		if i > 0 {
			what.WriteString(", ")
		}
		what.WriteString(t + ": " + strconv.FormatUint(rows[t], 10))
	}
	what.WriteString(")")
	c.JSON(http.StatusBadRequest, gin.H{
		"error":        "confirm: required; deleting " + what.String() + "; repeat with ?confirm=" + site,
		"would_delete": rows,
	})
}

// siteTables lists the tables holding rows per site.
func (s *Server) siteTables(ctx context.Context) ([]string, error) {
	res, err := s.q.Query(ctx, queries.Text(queries.SiteTables), nil)
	if err != nil {
		return nil, fmt.Errorf("api: site tables: %w", err)
	}
	tables := make([]string, 0, res.Len())
	for res.Next() {
		tables = append(tables, res.String("name"))
	}
	if err := res.Err(); err != nil {
		return nil, fmt.Errorf("api: site tables: %w", err)
	}
	return tables, nil
}

// siteRows counts the site's rows in each table that has a site column.
func (s *Server) siteRows(ctx context.Context, site string) (map[string]uint64, error) {
	tables, err := s.siteTables(ctx)
	if err != nil {
		return nil, err
	}
	rows := make(map[string]uint64, len(tables))
	for _, t := range tables {
		if rows[t], err = s.siteRowsIn(ctx, t, site); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// siteRowsIn counts the site's rows in table t.
func (s *Server) siteRowsIn(ctx context.Context, t, site string) (uint64, error) {
	res, err := s.q.Query(ctx, queries.Text(queries.SiteRows), store.Params{"table": t, "site": site})
	if err != nil {
		return 0, fmt.Errorf("api: count rows of %s in %s: %w", site, t, err)
	}
	if res.Len() != 1 {
		return 0, fmt.Errorf("api: count rows of %s in %s: %d rows", site, t, res.Len())
	}
	res.Next()
	n := res.Uint64("rows")
	if err := res.Err(); err != nil {
		return 0, fmt.Errorf("api: count rows of %s in %s: %w", site, t, err)
	}
	return n, nil
}

// deleteSiteData deletes the site's rows from every table with a site
// column and returns how many each held. Tables holding none are left
// alone: a mutation rewrites parts, which costs even when nothing matches.
//
// views_raw goes first, then the rollups, and between the two the
// registry is quiesced: a feed in flight (a validator copying stored rows
// into the rollups, --feed-every) may have read the site's views_raw rows
// before they went, and must have written them before the rollups are
// counted and deleted, or a view stored just before the deletion would be
// counted again in the rollups for whoever registers the domain next.
// Feeds that start later find the rows gone. (Quiesce waits for this
// process's validators; on a cluster, another process's feed can still
// race the deletion by its own duration.)
func (s *Server) deleteSiteData(ctx context.Context, site string) (map[string]uint64, error) {
	tables, err := s.siteTables(ctx)
	if err != nil {
		return nil, err
	}
	rows := make(map[string]uint64, len(tables))
	del := func(t string) error {
		n, err := s.siteRowsIn(ctx, t, site)
		if err != nil {
			return err
		}
		rows[t] = n
		if n == 0 {
			return nil
		}
		if err := s.q.Exec(ctx, queries.Text(queries.SiteDelete), store.Params{"table": t, "site": site}); err != nil {
			return fmt.Errorf("api: delete rows of %s in %s: %w", site, t, err)
		}
		return nil
	}
	if slices.Contains(tables, rawTable) {
		if err := del(rawTable); err != nil {
			return nil, err
		}
	}
	s.sites.Quiesce()
	for _, t := range tables {
		if t == rawTable {
			continue
		}
		if err := del(t); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// rawTable is where every verdict is stored, and what the feed reads.
const rawTable = "views_raw"

func total(rows map[string]uint64) uint64 {
	var n uint64
	for _, v := range rows {
		n += v
	}
	return n
}

// adminSite is the normalised :site of an admin route, or a 400.
func (s *Server) adminSite(c *gin.Context) (string, bool) {
	site, err := viewcount.NormaliseSite(c.Param("site"))
	if err != nil {
		s.fail(c, errBadRequest("site: not a domain name"))
		return "", false
	}
	return site, true
}

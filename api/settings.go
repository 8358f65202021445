package api

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/viewcount/viewcount"
)

// settingsRoutes registers a site owner's settings: what a site's token
// may change without the admin's (docs/stats-api.md, "GET /v1/sites/{site}/settings").
func (s *Server) settingsRoutes(r gin.IRouter) {
	r.GET("/v1/sites/:site/settings", s.getSettings)
	r.PATCH("/v1/sites/:site/settings", s.patchSettings)
}

// settings are a site's settings as its owner reads and sets them.
type settings struct {
	Site string `json:"site"`
	// EngagedAfter (seconds) and CountMode: docs/engagement.md.
	EngagedAfter int    `json:"engaged_after"`
	CountMode    string `json:"count_mode"`
	// EmbedOrigins may show the dashboard in a frame (docs/dashboard.md).
	EmbedOrigins []string `json:"embed_origins"`
}

func newSettings(site viewcount.Site) settings {
	info := newSiteInfo(site)
	return settings{Site: info.Site, EngagedAfter: info.EngagedAfter, CountMode: info.CountMode, EmbedOrigins: info.EmbedOrigins}
}

// getSettings answers GET /v1/sites/{site}/settings, with the site's
// token or the admin's (a share token: 403).
func (s *Server) getSettings(c *gin.Context) {
	domain, ok := s.ownerAuth(c)
	if !ok {
		return
	}
	site, err := s.sites.Get(c.Request.Context(), domain)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, newSettings(site))
}

// patchSettings answers PATCH /v1/sites/{site}/settings with any of
// {"engaged_after":10} and {"count_mode":"engaged"}: the settings as
// stored. The body is checked as the admin's PATCH checks it (readSitePatch),
// so a bad value gets the same 400 and changes nothing.
func (s *Server) patchSettings(c *gin.Context) {
	site, ok := s.ownerAuth(c)
	if !ok {
		return
	}
	p, err := readSitePatch(c, ownerFields)
	if err != nil {
		s.fail(c, err)
		return
	}
	updated, err := s.applySitePatch(c.Request.Context(), site, p)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, newSettings(updated))
}

// The fields of a site's settings a PATCH may name: the admin's all, a
// site owner's what changes the site's own figures only (the time zone
// and host names stay the operator's: the host names decide what the
// validators count as the site's).
var (
	adminFields = []string{"timezone", "hostnames", "engaged_after", "count_mode", "embed_origins"}
	ownerFields = []string{"engaged_after", "count_mode", "embed_origins"}
)

// fieldExample is each field as the 400s show it.
var fieldExample = map[string]string{
	"timezone":      `{"timezone":"Europe/Berlin"}`,
	"hostnames":     `{"hostnames":["example.com","*.example.com"]}`,
	"engaged_after": `{"engaged_after":10}`,
	"count_mode":    `{"count_mode":"engaged"}`,
	"embed_origins": `{"embed_origins":["https://blog.example.com"]}`,
}

// sitePatch is a checked PATCH body of a site's settings: the fields it
// names (nil: left as they are).
type sitePatch struct {
	Timezone     *string   `json:"timezone"`
	Hostnames    *[]string `json:"hostnames"`
	EngagedAfter *int      `json:"engaged_after"`
	CountMode    *string   `json:"count_mode"`
	EmbedOrigins *[]string `json:"embed_origins"`
	mode         *viewcount.CountMode
}

// readSitePatch decodes and checks a PATCH body naming any of fields: the
// one validator of the admin's PATCH /v1/admin/sites/{site} and an
// owner's PATCH /v1/sites/{site}/settings, so both refuse a value with
// the same 400. A body naming none of fields, or another field, is
// refused; so is the whole body when any value is bad.
func readSitePatch(c *gin.Context, fields []string) (sitePatch, error) {
	var p sitePatch
	examples := make([]string, len(fields))
	for i, f := range fields {
		examples[i] = fieldExample[f]
	}
	want := strings.Join(examples, ", ") + " or several"
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, 16<<10)
	dec := json.NewDecoder(c.Request.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		msg := "body: want " + want
		if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			msg = "body: unknown field " + field + " (want " + want + ")"
		}
		return p, errBadRequest(msg)
	}
	named := map[string]bool{"timezone": p.Timezone != nil, "hostnames": p.Hostnames != nil,
		"engaged_after": p.EngagedAfter != nil, "count_mode": p.CountMode != nil, "embed_origins": p.EmbedOrigins != nil}
	some := false
	for _, f := range adminFields {
		if !named[f] {
			continue
		}
		some = true
		if !slices.Contains(fields, f) {
			return p, errBadRequest(`body: unknown field "` + f + `" (want ` + want + ")")
		}
	}
	if !some {
		return p, errBadRequest("body: " + strings.Join(fields[:len(fields)-1], ", ") + " or " + fields[len(fields)-1] + " required")
	}
	// Every value is checked before any is stored: a bad one changes nothing.
	if p.Timezone != nil {
		if err := viewcount.CheckTimezone(*p.Timezone); err != nil {
			return p, errBadRequest("timezone: not an IANA time zone name such as Europe/Berlin or UTC")
		}
	}
	if p.Hostnames != nil {
		if _, err := viewcount.CheckHostnames(*p.Hostnames); err != nil {
			return p, errBadRequest("hostnames: " + strings.TrimPrefix(err.Error(), viewcount.ErrBadHostname.Error()+": ") +
				` (want host names such as example.com, "*.example.com" for its subdomains, or "*" for any host)`)
		}
	}
	if p.CountMode != nil {
		m, err := viewcount.ParseCountMode(*p.CountMode)
		if err != nil {
			return p, errBadRequest(err.Error())
		}
		p.mode = &m
	}
	if p.EngagedAfter != nil {
		if err := viewcount.CheckEngagedAfter(*p.EngagedAfter); err != nil {
			return p, errBadRequest(err.Error())
		}
	}
	if p.EmbedOrigins != nil {
		if _, err := viewcount.CheckEmbedOrigins(*p.EmbedOrigins); err != nil {
			return p, errBadRequest("embed_origins: " + strings.TrimPrefix(err.Error(), viewcount.ErrBadEmbedOrigin.Error()+": "))
		}
	}
	return p, nil
}

// applySitePatch stores a checked patch and returns the site as stored.
func (s *Server) applySitePatch(ctx context.Context, site string, p sitePatch) (viewcount.Site, error) {
	var (
		updated viewcount.Site
		err     error
	)
	if p.EngagedAfter != nil || p.mode != nil {
		after := 0
		if p.EngagedAfter != nil {
			after = *p.EngagedAfter
		}
		if updated, err = s.sites.SetEngagement(ctx, site, after, p.mode); err != nil {
			return updated, err
		}
		s.logger.Info("site engagement set", "site", site, "engaged_after", updated.Engaged(), "count_mode", updated.CountMode.String())
	}
	if p.Timezone != nil {
		if updated, err = s.sites.SetTimezone(ctx, site, *p.Timezone); err != nil {
			return updated, err
		}
		s.logger.Info("site time zone set", "site", site, "timezone", updated.Timezone)
	}
	if p.Hostnames != nil {
		if updated, err = s.sites.SetHostnames(ctx, site, *p.Hostnames); err != nil {
			return updated, err
		}
		s.logger.Info("site hostnames set", "site", site, "hostnames", updated.Hostnames())
	}
	if p.EmbedOrigins != nil {
		if updated, err = s.sites.SetEmbedOrigins(ctx, site, *p.EmbedOrigins); err != nil {
			return updated, err
		}
		s.logger.Info("site embed origins set", "site", site, "embed_origins", updated.EmbedOrigins)
	}
	return updated, nil
}

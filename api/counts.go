package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/viewcount/viewcount"
)

const (
	// maxBatchPages bounds one batch: a listing page shows tens of items,
	// and a batch's missing pages go to the store as one IN list.
	maxBatchPages = 100
	// maxBatchBody fits 100 pages of the longest path --keep-query allows
	// (2048 bytes), JSON-quoted.
	maxBatchBody = 256 << 10
	// maxBatchParams refuses queries no client of this endpoint sends before
	// net/url builds a map of them.
	maxBatchParams = 4 * maxBatchPages
)

type pageCount struct {
	Page    string `json:"page"`
	Views   uint64 `json:"views"`
	Uniques uint64 `json:"uniques"`
	Pending uint64 `json:"pending"`
	// Own is 1 when views certainly lacks the reader's own view of the
	// page (the POST's "own"): views + own is the count with it. Absent
	// otherwise.
	Own uint64 `json:"own,omitempty"`
}

type countsResponse struct {
	Site   string      `json:"site"`
	AsOf   string      `json:"as_of"`
	Counts []pageCount `json:"counts"`
}

// counts answers GET /v1/sites/{site}/counts?page=/a&page=/b… and POST with
// {"pages":["/a","/b"]}: each page's public count, in the order asked (a
// page asked twice is answered twice), with its path normalised as /count
// normalises it. Pages the snapshot holds cost nothing; the others are read
// with one store query for the whole batch. as_of is the oldest reading's,
// so every count includes at least the views counted by then; pages read
// together are refreshed together, so in steady state they share it. A
// POST's "own" names the reader's own views (own.go); such an answer is
// the reader's alone, and not stored by caches.
func (s *Server) counts(c *gin.Context) {
	allowAnyOrigin(c)
	site, err := viewcount.NormaliseSite(c.Param("site"))
	if err != nil {
		s.fail(c, errBadRequest("site: not a domain name"))
		return
	}
	var raw []string
	var own []ownView
	field := "page"
	if c.Request.Method == http.MethodPost {
		field = "pages"
		var body batchBody
		if body, err = readBatchBody(c); err == nil {
			raw = body.Pages
			own, err = s.ownViews(body.Own)
		}
	} else {
		raw, err = batchQuery(c.Request.URL.RawQuery)
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	pages, err := s.batchPages(raw, field)
	if err != nil {
		s.fail(c, err)
		return
	}
	resp := countsResponse{Site: site, Counts: make([]pageCount, len(pages))}
	for i, p := range pages {
		resp.Counts[i].Page = p
	}
	// Registered or not, the same path (see existence).
	rs, err := s.snap.getMany(c.Request.Context(), site, pages)
	if err != nil {
		s.fail(c, err)
		return
	}
	// A page asked twice is answered alike, and read again (own.go) once.
	type withOwn struct {
		r   *reading
		own uint64
	}
	var mine map[string]withOwn
	if s.snap.countsEngaged(site) {
		// A view just made is not engaged yet: an engaged count has no
		// own view to add.
		own = nil
	}
	if len(own) > 0 {
		mine = make(map[string]withOwn, len(pages))
	}
	oldest := rs[0].AsOf
	for i, r := range rs {
		if mine != nil {
			o, ok := mine[pages[i]]
			if !ok {
				o.r, o.own = s.snap.ownOf(c.Request.Context(), own, site, pages[i], r)
				mine[pages[i]] = o
			}
			r, resp.Counts[i].Own = o.r, o.own
		}
		resp.Counts[i].Views, resp.Counts[i].Uniques, resp.Counts[i].Pending = r.Views, r.Uniques, r.Pending
		if i == 0 {
			oldest = r.AsOf
		}
		if r.AsOf.Before(oldest) {
			oldest = r.AsOf
		}
	}
	resp.AsOf = oldest.UTC().Format(time.RFC3339)
	c.Writer.Header()["Cache-Control"] = s.cacheControl
	if len(own) > 0 {
		c.Writer.Header()["Cache-Control"] = noStore
	}
	c.JSON(http.StatusOK, resp)
}

var noStore = []string{"no-store"}

// batchQuery returns the page parameters of a GET, read as url.ParseQuery
// reads them (as /count does: a pair with a bad escape is skipped).
func batchQuery(raw string) ([]string, error) {
	if strings.Count(raw, "&") >= maxBatchParams {
		return nil, errBadRequest("page: at most " + strconv.Itoa(maxBatchPages) + " pages")
	}
	vs, _ := url.ParseQuery(raw)
	return vs["page"], nil
}

var errBatchBody = errBadRequest(`body: want {"pages":["/a","/b"]}`)

// batchBody is a POST's body: the pages, and the reader's own views.
type batchBody struct {
	Pages []string  `json:"pages"`
	Own   []ownJSON `json:"own"`
}

// readBatchBody reads a POST's {"pages":[…],"own":[…]}. text/plain is
// accepted as well as application/json, as the beacon does: a
// cross-origin POST of text/plain needs no preflight, one round trip less
// for a page.
func readBatchBody(c *gin.Context) (batchBody, error) {
	switch strings.ToLower(c.ContentType()) {
	case "application/json", "text/plain":
	default:
		return batchBody{}, &httpError{http.StatusUnsupportedMediaType, "content type must be application/json or text/plain"}
	}
	body, err := readAllLimited(c, maxBatchBody)
	if err != nil {
		return batchBody{}, err
	}
	if !utf8.Valid(body) {
		return batchBody{}, errBadRequest("pages: invalid UTF-8")
	}
	var req batchBody
	if err := json.Unmarshal(body, &req); err != nil {
		if isOwnError(err) {
			return batchBody{}, errOwnBody
		}
		return batchBody{}, errBatchBody
	}
	return req, nil
}

func readAllLimited(c *gin.Context, limit int64) ([]byte, error) {
	if c.Request.ContentLength > limit {
		return nil, errBatchTooLarge
	}
	b, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errBatchTooLarge
		}
		return nil, errBadRequest("body: could not be read")
	}
	return b, nil
}

var errBatchTooLarge = &httpError{http.StatusRequestEntityTooLarge, "body: larger than " + strconv.Itoa(maxBatchBody>>10) + " KiB"}

// batchPages checks and normalises the pages of a batch; field names them in
// errors, with the index of the one at fault.
func (s *Server) batchPages(raw []string, field string) ([]string, error) {
	switch {
	case len(raw) == 0:
		return nil, errBadRequest(field + ": at least one page is required")
	case len(raw) > maxBatchPages:
		return nil, errBadRequest(field + ": at most " + strconv.Itoa(maxBatchPages) + " pages, got " + strconv.Itoa(len(raw)))
	}
	pages := make([]string, len(raw))
	for i, p := range raw {
		page, err := s.readPage(p)
		if err != nil {
			return nil, errBadRequest(field + "[" + strconv.Itoa(i) + "]" + strings.TrimPrefix(err.Error(), "page"))
		}
		pages[i] = page
	}
	return pages, nil
}

// readPage checks and normalises a page parameter as ingest normalises the
// pages it records, so /blog/ and /blog read the same count.
func (s *Server) readPage(raw string) (string, error) {
	if len(raw) > s.cfg.MaxPage {
		return "", errBadRequest("page: longer than " + strconv.Itoa(s.cfg.MaxPage) + " bytes")
	}
	page, err := s.normPage(raw)
	if err != nil {
		return "", errBadRequest("page: " + err.Error())
	}
	return page, nil
}

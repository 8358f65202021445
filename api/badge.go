package api

import (
	"bytes"
	_ "embed"
	"encoding/xml"
	"math"
	"net/http"
	"strconv"
	"strings"
	"text/template"
	"unicode"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/viewcount/viewcount"
)

// maxLabel bounds a badge's label, in characters: a badge is a word or two,
// and the SVG's size must not follow the query's.
const maxLabel = 40

//go:embed badge.svg
var badgeSVG string

// badgeTmpl is the flat two-box badge. Every text goes through xml: the
// label is the client's, and an SVG is a document that could carry script.
var badgeTmpl = template.Must(template.New("badge").Funcs(template.FuncMap{"xml": escapeXML}).Parse(badgeSVG))

var (
	svgType   = []string{"image/svg+xml"}
	svgPolicy = []string{"default-src 'none'"} // opened on its own, the badge runs nothing
)

// badgeParams are the query parameters a badge reads.
var badgeParams = [...]string{"page", "label"}

// badge answers GET /badge/{site}.svg?page=P[&label=views]: the page's
// public count (the whole site's without page) as an SVG badge, from the
// same lagged snapshot as /count and cacheable for the same lag, so a
// README or a page embedding it costs the store nothing per view.
func (s *Server) badge(c *gin.Context) {
	allowAnyOrigin(c)
	name, ok := strings.CutSuffix(c.Param("file"), ".svg")
	if !ok {
		s.fail(c, errNotFound("not found: a badge is /badge/{site}.svg"))
		return
	}
	site, err := viewcount.NormaliseSite(name)
	if err != nil {
		s.fail(c, errBadRequest("site: not a domain name"))
		return
	}
	var q [len(badgeParams)]string
	found := viewcount.QueryValues(c.Request.URL.RawQuery, badgeParams[:], q[:])
	var page string
	if found&1 != 0 {
		if page, err = s.readPage(q[0]); err != nil {
			s.fail(c, err)
			return
		}
	}
	label := "views"
	if found&2 != 0 {
		if err := checkLabel(q[1]); err != nil {
			s.fail(c, err)
			return
		}
		label = q[1]
	}
	// Registered or not, the same path (see existence).
	r, err := s.snap.get(c.Request.Context(), site, page)
	if err != nil {
		s.fail(c, err)
		return
	}
	views := r.Views
	svg, err := renderBadge(label, shortCount(views))
	if err != nil {
		s.fail(c, err)
		return
	}
	h := c.Writer.Header()
	h["Cache-Control"] = s.cacheControl
	h["Content-Type"] = svgType
	h["Content-Security-Policy"] = svgPolicy
	c.Status(http.StatusOK)
	_, _ = c.Writer.Write(svg)
}

func checkLabel(label string) error {
	switch {
	case label == "":
		return errBadRequest("label: empty")
	case !utf8.ValidString(label):
		return errBadRequest("label: invalid UTF-8")
	case utf8.RuneCountInString(label) > maxLabel:
		return errBadRequest("label: longer than " + strconv.Itoa(maxLabel) + " characters")
	case strings.IndexFunc(label, unicode.IsControl) >= 0:
		return errBadRequest("label: control characters")
	}
	return nil
}

// shortCount writes n in at most four characters and a unit, rounded down
// so a badge never claims views not yet had: 999, 1.2k, 12.3k, 123k, 1.2M.
func shortCount(n uint64) string {
	units := [...]string{"", "k", "M", "B", "T", "Q"}
	u, scale := 0, uint64(1)
	for n/scale >= 1000 && u < len(units)-1 {
		u++
		scale *= 1000
	}
	whole := n / scale
	if u == 0 || whole >= 100 {
		return strconv.FormatUint(whole, 10) + units[u]
	}
	tenth := n / (scale / 10) % 10
	return strconv.FormatUint(whole, 10) + "." + strconv.FormatUint(tenth, 10) + units[u]
}

// px is a length in the SVG, written with at most one decimal.
type px float64

func (p px) String() string {
	return strconv.FormatFloat(math.Round(float64(p)*10)/10, 'f', -1, 64)
}

type badgeBoxes struct {
	Label, Value, Title           string
	Width, LabelWidth, ValueWidth px
	LabelX, ValueX                px
	LabelText, ValueText          px
}

// badgePad is the room each side of a box's text.
const badgePad = 6

func renderBadge(label, value string) ([]byte, error) {
	lt, vt := textWidth(label), textWidth(value)
	// Whole pixels for the boxes keep their edges sharp; textLength pins
	// each text to its measured width, so a fallback font with other
	// widths still fills its box the same way.
	lw, vw := math.Round(lt)+2*badgePad, math.Round(vt)+2*badgePad
	b := badgeBoxes{Label: label, Value: value, Title: label + ": " + value,
		Width: px(lw + vw), LabelWidth: px(lw), ValueWidth: px(vw),
		LabelX: px(lw / 2), ValueX: px(lw + vw/2), LabelText: px(lt), ValueText: px(vt)}
	var buf bytes.Buffer
	if err := badgeTmpl.Execute(&buf, b); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// textWidth is the width of s at 11 px in the badge's font; a character
// beyond Latin-1 is taken as one em, about what CJK and most symbols take.
func textWidth(s string) float64 {
	w := 0.0
	for _, r := range s {
		if i := int(r) - badgeFirstRune; i >= 0 && i < len(badgeWidths) && badgeWidths[i] > 0 {
			w += badgeWidths[i]
		} else {
			w += 11
		}
	}
	return w
}

func escapeXML(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder never fails
	return b.String()
}

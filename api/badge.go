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

// The value box's colours: a count, a refusal.
const (
	badgeBlue = "#007ec6"
	badgeRed  = "#e05d44"
)

// maxBadgeMessage bounds a refusal's message on a badge, in characters
// (the messages are the API's own, a few words; a cut ends in "…").
const maxBadgeMessage = 60

// badgeParams are the query parameters a badge reads.
var badgeParams = [...]string{"page", "label"}

// badge answers GET /badge/{site}.svg?page=P[&label=views]: the page's
// public count (the whole site's without page) as an SVG badge, from the
// same lagged snapshot as /count and cacheable for the same lag, so a
// README or a page embedding it costs the store nothing per view.
//
// Every answer is an SVG, a refusal too: the <img> that shows a badge
// shows anything else as a broken image, and the creator looking at their
// page would not learn why. A refusal keeps its status (what a script or
// a link checker reads) and draws the message JSON would have carried,
// e.g. "views │ label: longer than 40 characters" in red.
func (s *Server) badge(c *gin.Context) {
	allowAnyOrigin(c)
	label, value, err := s.badgeText(c)
	status, color, cache := http.StatusOK, badgeBlue, s.cacheControl
	if err != nil {
		status, value = s.answerOf(c, err)
		color = badgeRed
		if status >= 500 {
			cache = noStore // the next try may draw the count
		}
	}
	svg, err := renderBadge(label, value, color)
	if err != nil {
		s.fail(c, err)
		return
	}
	h := c.Writer.Header()
	h["Cache-Control"] = cache
	h["Content-Type"] = svgType
	h["Content-Security-Policy"] = svgPolicy
	c.Status(status)
	_, _ = c.Writer.Write(svg)
}

// badgeText is a badge's label and its count, or the error that refuses
// the request (the label then the default, or the request's own when it
// passed its check).
func (s *Server) badgeText(c *gin.Context) (label, value string, err error) {
	label = "views"
	name, ok := strings.CutSuffix(c.Param("file"), ".svg")
	if !ok {
		return label, "", errNotFound("not found: a badge is /badge/{site}.svg")
	}
	site, err := viewcount.NormaliseSite(name)
	if err != nil {
		return label, "", errBadRequest("site: not a domain name")
	}
	var q [len(badgeParams)]string
	found := viewcount.QueryValues(c.Request.URL.RawQuery, badgeParams[:], q[:])
	// An empty label is none (a template whose variable was unset): the
	// default, as for no label at all.
	if found&2 != 0 && q[1] != "" {
		if err := checkLabel(q[1]); err != nil {
			return label, "", err
		}
		label = q[1]
	}
	var page string
	if found&1 != 0 {
		if page, err = s.readPage(q[0]); err != nil {
			return label, "", err
		}
	}
	// Registered or not, the same path (see existence).
	r, err := s.snap.get(c.Request.Context(), site, page)
	if err != nil {
		return label, "", err
	}
	return label, shortCount(r.Views), nil
}

func checkLabel(label string) error {
	switch {
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
	Label, Value, Title, Color    string
	Width, LabelWidth, ValueWidth px
	LabelX, ValueX                px
	LabelText, ValueText          px
}

// badgePad is the room each side of a box's text.
const badgePad = 6

func renderBadge(label, value, color string) ([]byte, error) {
	if utf8.RuneCountInString(value) > maxBadgeMessage {
		value = string([]rune(value)[:maxBadgeMessage-1]) + "…"
	}
	lt, vt := textWidth(label), textWidth(value)
	// Whole pixels for the boxes keep their edges sharp; textLength pins
	// each text to its measured width, so a fallback font with other
	// widths still fills its box the same way.
	lw, vw := math.Round(lt)+2*badgePad, math.Round(vt)+2*badgePad
	b := badgeBoxes{Label: label, Value: value, Title: label + ": " + value, Color: color,
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

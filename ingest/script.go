package ingest

import (
	"bytes"
	"compress/gzip"
	"strconv"
	"strings"
)

// trimScript drops vc.js's whole-line comments, blank lines and
// indentation: they are for its readers, and the script, on every page of
// every site, has a budget of 2.5 KB gzipped. Every line keeps its end, so
// JavaScript's automatic semicolons fall where they did, and comments at
// the end of a line stay (a "//" there may be inside a string).
func trimScript(src []byte) []byte {
	out := make([]byte, 0, len(src))
	for line := range bytes.Lines(src) {
		line = bytes.TrimLeft(line, " \t")
		if len(bytes.TrimSpace(line)) == 0 || bytes.HasPrefix(line, []byte("//")) {
			continue
		}
		out = append(out, line...)
	}
	return out
}

// trackerGzip is vc.js compressed once: the script is on every page of
// every site, its budget is 2.5 KB on the wire, and no proxy in front of
// the process can be assumed to compress it.
var trackerGzip = gzipBytes(trackerJS)

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // a valid level never fails
	_, _ = zw.Write(b)                                       // a bytes.Buffer never fails
	_ = zw.Close()
	return buf.Bytes()
}

// scriptVariant picks the tracker's body for an Accept-Encoding header: the
// gzipped one when the client takes gzip, with its own ETag (a strong
// ETag names one representation), else the plain one.
func scriptVariant(acceptEncoding, etag string) (body []byte, variantETag string, gz bool) {
	if acceptsGzip(acceptEncoding) {
		return trackerGzip, strings.TrimSuffix(etag, `"`) + `-gz"`, true
	}
	return trackerJS, etag, false
}

// acceptsGzip reports whether an Accept-Encoding header lists gzip (or
// x-gzip) with a non-zero q (RFC 9110 section 12.5.3).
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(part, ";")
		switch strings.ToLower(strings.TrimSpace(coding)) {
		case "gzip", "x-gzip":
		default:
			continue
		}
		if q, ok := strings.CutPrefix(strings.ToLower(strings.ReplaceAll(params, " ", "")), "q="); ok {
			if v, err := strconv.ParseFloat(q, 64); err == nil && v == 0 {
				continue
			}
		}
		return true
	}
	return false
}

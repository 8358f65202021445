package viewcount

import (
	"net/url"
	"strings"
)

// maxScannedParams bounds the queries QueryValues scans itself. net/url
// ignores every parameter of a query with more than 10000 of them (a limit
// GODEBUG urlmaxqueryparams can move); rather than copy that rule, longer
// queries, which no real client sends, are left to url.ParseQuery.
const maxScannedParams = 64

// QueryValues sets vals[i] to the first value of keys[i] in the raw query
// string and returns which keys it found (bit i for keys[i]; at most 64
// keys), exactly as url.ParseQuery(raw) sees them (and so URL.Query and
// gin's c.GetQuery): a pair with a ';' or an invalid escape in its key or
// value is skipped, so a later pair of the same key may still match, and
// '+' is a space. Unlike them it builds no map of every parameter, and
// copies only a key or value that has an escape: the pixel and the public
// count read a few parameters on every request.
func QueryValues(raw string, keys, vals []string) (found uint64) {
	if strings.Count(raw, "&") >= maxScannedParams {
		vs, _ := url.ParseQuery(raw)
		for i, k := range keys {
			if v, ok := vs[k]; ok {
				vals[i] = v[0]
				found |= 1 << i
			}
		}
		return found
	}
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" || strings.Contains(pair, ";") { // ParseQuery rejects ';'
			continue
		}
		key, value, _ := strings.Cut(pair, "=")
		key, err := unescapeQuery(key)
		if err != nil {
			continue
		}
		i := indexOf(keys, key)
		if i < 0 || found&(1<<i) != 0 {
			continue
		}
		if value, err = unescapeQuery(value); err != nil {
			continue
		}
		vals[i] = value
		found |= 1 << i
	}
	return found
}

func indexOf(keys []string, k string) int {
	for i, x := range keys {
		if x == k {
			return i
		}
	}
	return -1
}

func unescapeQuery(s string) (string, error) {
	if !strings.ContainsAny(s, "%+") {
		return s, nil
	}
	return url.QueryUnescape(s)
}

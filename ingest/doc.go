// Package ingest turns an HTTP hit (the GET /p.gif pixel or a POST /v1/events
// beacon) into a viewcount.Event and answers only once that event is durable
// in JetStream.
//
// It is the only place that ever sees a client's raw IP address. The address
// is turned into two keyed hashes (VisitorID, NetworkID) under a salt that
// rotates daily (Salts), a datacenter flag, a country code (from the
// operator's CDN header or the geo database) and an AS number (the asn
// data), and is then dropped: it must never be stored, published or
// logged, and neither may the salt or the full user agent. The page's UTM
// tags are read here too (ParseUTM), before normalisation drops its query,
// and so are the request's headers: which of a browser's it carried
// becomes viewcount.HeaderFlags (requestFlags); the headers stay here.
//
// Requests are decoded by Gin handlers into plain values; normalisation,
// hashing and publishing are plain functions that never see *gin.Context.
// Many concurrent requests share one JetStream message per partition
// (Publisher, a group commit), so durability does not cost throughput.
package ingest

import "errors"

// Errors callers branch on; returned wrapped, test with errors.Is. The HTTP
// handlers map them to status codes in one place (statusOf).
var (
	// ErrBadInput: the hit cannot be parsed (missing or malformed site,
	// page, id, type, engagement numbers, JSON). Answered 400; nothing is
	// published.
	ErrBadInput = errors.New("bad input")
	// ErrTooLarge: the request body exceeds the limit. Answered 413.
	ErrTooLarge = errors.New("request too large")
	// ErrUnsupportedType: a beacon with a content type other than JSON or
	// text/plain. Answered 415.
	ErrUnsupportedType = errors.New("unsupported content type")
	// ErrUnavailable: the events could not be made durable (JetStream down,
	// timed out, publisher stopped, salt unavailable). Answered 503; the
	// client may retry with the same event id.
	ErrUnavailable = errors.New("unavailable")
)

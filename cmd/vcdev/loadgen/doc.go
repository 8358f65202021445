// Package loadgen generates labelled page-view traffic and drives it against
// a running Viewcount server over HTTP.
//
// The traffic model (Generator) is a deterministic stream of hits, each
// labelled with the Class of client that sent it (human, bot, flood, farm…)
// and carrying its class in its event id, so the verdicts the server stores
// can be joined back to what was sent and filtering precision and recall
// computed (Tally). The driver (Run) sends hits, or public-count reads, over
// keep-alive connections, closed-loop or open-loop at a target rate, and
// reports throughput, latency percentiles (measured from the scheduled send
// time, so a slow server cannot hide its queueing: no coordinated omission),
// errors by status and kind and, read from the server's /metrics, the
// pipeline lag sampled while sending, the end-to-end lag until every event
// is inserted, and the server's memory.
//
// Requests go out through a minimal HTTP/1.1 client (rawhttp.go), one
// connection per worker, written from reused buffers: loadgen shares the
// machine with the server it measures, so its CPU per request must stay
// close to wrk's. The bare baseline (StartBaseline) is driven by the same
// client, so server ÷ baseline compares like with like.
//
// It must never send load anywhere but the configured server, and never to a
// non-loopback address unless explicitly allowed (Config.AllowRemote): the
// IP addresses in hits are only written into X-Forwarded-For headers.
package loadgen

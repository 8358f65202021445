// Package stats serves the creator analytics API: GET
// /v1/sites/{site}/stats/summary, timeseries, breakdown, realtime and
// filtered. Every answer is read from the rollups the materialized views
// keep (dim_rollup, migration 008, and page_rollup, migration 004), never
// from a scan of views_raw, so a call costs the same whatever the traffic.
//
// Ranges: rollups are kept per UTC hour and day. A range is counted as the
// whole UTC days inside it from the day rows plus the hours at its edges
// from the hour rows; views add and the uniques sketches merge as set
// unions, so the answer is exact for any range of whole hours, in
// particular a day in any time zone whose offset is a whole number of
// hours. Ranges are widened to whole hours (summary, breakdown, filtered)
// or whole buckets of the interval (timeseries); the answer's from and to
// say what was counted. In the few zones with a 30 or 45 minute offset
// (Asia/Kolkata, Asia/Kathmandu, …) day buckets start at the UTC hour that
// holds local midnight, so they are off by that many minutes.
//
// Uniques are uniqCombined64 sketches of the daily-rotating visitor ids,
// merged over the range, never summed. The ids rotate daily (privacy), so
// over a multi-day range a visitor who returns on another day counts once
// per day. Answers state the estimator's relative standard error: 0 below
// 4096 distinct ids (the sketch keeps the exact set up to there), and
// 1.04/√2¹⁷ ≈ 0.29 % above (HyperLogLog with 2¹⁷ cells).
//
// The package never answers without the caller's Auth saying yes, and
// never logs tokens or visitor ids.
package stats

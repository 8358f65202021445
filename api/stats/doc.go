// Package stats serves the creator analytics API: GET
// /v1/sites/{site}/stats/summary, timeseries, breakdown, realtime and
// filtered. Every answer is read from what the materialized views keep
// (the rollups dim_rollup, migration 008, and page_rollup, 004; one
// page's valid views in page_views, 011; visits and engagement, the
// summary's and the timeseries' metrics but views, in engagement_rollup,
// 021, which has hours and days but no minutes), never from a scan of
// views_raw, so a call costs the same whatever the site's traffic.
//
// Ranges: rollups are kept per UTC hour and day. A range is counted as the
// whole UTC days inside it from the day rows plus the hours at its edges
// from the hour rows; views add and the uniques sketches merge as set
// unions, so the answer is exact for any range of whole hours, in
// particular a day in any time zone whose offset is a whole number of
// hours. Ranges are widened to whole hours (summary, breakdown, filtered)
// or whole buckets of the interval (timeseries); the answer's from and to
// say what was counted. In the few zones with a 30 or 45 minute offset
// (Asia/Kolkata, Asia/Kathmandu, …) hours do not meet local midnight: a
// day bucket holds the UTC hours that start in that local day, so it runs
// from 00:30 (00:45) to 00:30 (00:45) local time.
//
// Uniques are uniqCombined64 sketches of the daily-rotating visitor ids,
// merged over the range, never summed. The ids rotate daily (privacy), so
// over a multi-day range a visitor who returns on another day counts once
// per day. Each quantity has one reading (docs/stats.md, "Unique
// visitors"): the site's totals, buckets and breakdown values are
// dim_rollup's sketches (uniqCombined64(12): exact below 128 distinct
// ids, then 1.04/√2¹² ≈ 1.6 %); a page over a range (its summary, its row
// of the page ranking) is counted exactly below exactBelow views, from
// page_rollup's sketches, which are exact sets there, and is dim_rollup's
// estimate above, so its tile and its row are the same number; a page's
// buckets are page_rollup's (precision 17: exact below 4096, then
// ≈ 0.29 %). Answers state the relative standard error, and no answer
// shows more uniques than views (viewcount.CapUniques).
//
// Breakdowns of one page by source, referrer, UTM, browser, os, device,
// country and screen group that page's rows of page_views over the range
// (migration 011, which says why they are not sketches per page and what
// a store upgraded from before it holds), counting each value's uniques by
// the page's rule (exact below exactBelow views, else uniqCombined64(12));
// by page with a page filter, that page's own row of the site's page
// ranking.
//
// Filters (filter=, filter.go) narrow the summary, timeseries and
// breakdowns: filters on one dimension read that dimension's rollup rows
// whose value passes (each view has one value of a dimension, so they are
// its views exactly); filters on several, or a breakdown by another
// dimension, scan page_views over the range, views and uniques only.
//
// Answers are cached (Config.CacheBytes, an LRU bounded in bytes): one
// whose range ended more than the site's lag plus 10 minutes ago never
// changes and is kept until evicted; any other is served for the answers'
// max-age (10 s), so no cached answer is staler than the Cache-Control
// already allows. An answer's as_of is when it was read. Realtime is never
// cached.
//
// The package never answers without the caller's Auth saying yes, and
// never logs tokens or visitor ids.
package stats

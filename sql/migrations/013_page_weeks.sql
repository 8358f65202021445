-- Week rows for the site's breakdown by page (issue 10: "every stats call
-- over 30 days in p99 < 50 ms"; the breakdown by page took 64 ms for the
-- top 10 pages and 148 ms for the top 100 on the 10M-event history,
-- BENCHMARKS.md). Its views are sums, but its uniques merge every day's
-- sketch of each page shown: 30 merges per page over 30 days.
--
-- dim_rollup gains, per page, one row per week piece: the days of one ISO
-- week (Monday to Sunday, UTC) that lie in one calendar month, dim
-- 'page_week', bucket the piece's first day. A 30-day range is then at
-- most six pieces plus the days at its ends (queries/
-- stats_breakdown_page_uniques.sql). Pieces end at month boundaries so a
-- piece lies in one month, as every other row does: the month-by-month
-- rebuild and recount (sql/repair/dim_rollup_*) see whole pieces.
--
-- The rows are stored with grain 'day' on purpose: dim_rollup orders day
-- rows by value before bucket (migration 011), so the pieces of the pages
-- a breakdown shows are a few slices of the index, as their days are.
--
-- Upgrading: the pieces of the days already stored are merged from their
-- day rows, once (the copy runs only while no page_week row exists, with
-- a deduplication token, single-threaded), before the view that writes
-- new ones exists. As for the earlier migrations, stop every validator
-- first; `viewcount serve` migrates before it validates.
INSERT INTO dim_rollup
SETTINGS insert_deduplication_token = 'migration-013-page-weeks', insert_deduplicate = 1, max_threads = 1, max_insert_threads = 1
SELECT 'day', site, 'page_week', '', value, toDateTime(greatest(toMonday(bucket), toStartOfMonth(bucket)), 'UTC') AS piece,
    sum(views), uniqCombined64MergeState(12)(uniques)
FROM dim_rollup
WHERE dim = 'page' AND grain = 'day' AND page = ''
  AND (SELECT count() FROM dim_rollup WHERE dim = 'page_week') = 0
GROUP BY site, value, piece;

DROP VIEW IF EXISTS dim_rollup_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS dim_rollup_mv TO dim_rollup AS
SELECT
    r.1 AS grain,
    site,
    r.2 AS dim,
    r.3 AS page,
    r.4 AS value,
    multiIf(r.1 = 1, m, r.1 = 2, toStartOfHour(m), r.2 = 'page_week',
        toDateTime(greatest(toMonday(m), toStartOfMonth(m)), 'UTC'), toStartOfDay(m)) AS bucket,
    sum(c) AS views,
    uniqCombined64MergeState(12)(s) AS uniques
FROM
(
    SELECT site, toStartOfMinute(toDateTime(time, 'UTC')) AS m, verdict, views_feed.page AS p,
        ref_source, ref_host, utm_source, utm_medium, utm_campaign, browser, os, device, country, screen,
        count() AS c, uniqCombined64State(12)(visitor) AS s
    FROM views_feed
    GROUP BY GROUPING SETS ((site, m, verdict, ref_source, ref_host, utm_source, utm_medium, utm_campaign, browser, os, device, country, screen),
                            (site, m, verdict, p))
)
ARRAY JOIN multiIf(p = '' AND verdict = 'valid',
        [(1, 'total', '', ''), (2, 'total', '', ''), (3, 'total', '', ''),
             (2, 'source', '', toString(ref_source)), (3, 'source', '', toString(ref_source)),
             (2, 'referrer', '', toString(ref_host)), (3, 'referrer', '', toString(ref_host)),
             (2, 'utm_source', '', toString(utm_source)), (3, 'utm_source', '', toString(utm_source)),
             (2, 'utm_medium', '', toString(utm_medium)), (3, 'utm_medium', '', toString(utm_medium)),
             (2, 'utm_campaign', '', toString(utm_campaign)), (3, 'utm_campaign', '', toString(utm_campaign)),
             (2, 'browser', '', toString(browser)), (3, 'browser', '', toString(browser)),
             (2, 'os', '', toString(os)), (3, 'os', '', toString(os)),
             (2, 'device', '', toString(device)), (3, 'device', '', toString(device)),
             (2, 'country', '', toString(country)), (3, 'country', '', toString(country)),
             (2, 'screen', '', toString(screen)), (3, 'screen', '', toString(screen))],
    p = '',
        [(2, 'reason', '', toString(verdict)), (3, 'reason', '', toString(verdict))],
    verdict = 'valid',
        [(2, 'page', '', p), (3, 'page', '', p), (3, 'page_week', '', p)],
        [(2, 'reason', p, toString(verdict)), (2, 'filtered_page', '', p), (3, 'filtered_page', '', p)]) AS r
GROUP BY grain, site, dim, page, value, bucket;

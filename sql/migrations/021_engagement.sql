-- Engagement and visits (docs/engagement.md): views_raw keeps the
-- tracker's engagement reports beside the views, and what every verdict
-- changes of its site's visit and engagement figures; the rollups of
-- views keep counting views only; engagement_rollup sums the figures.
--
-- views_raw, raw (as ingest recorded them; a revalidation reads them
-- back): kind (0 a view, 1 an engagement report: Event.Kind), engaged_ms,
-- scroll and age_ms (Event.Engagement, 0 on a view). Derived, from the
-- verdict's VisitDelta (the validator's visit stage; a revalidation
-- recomputes them, never reads them): visit_set says the stage decided
-- the row (a counted view or an accepted engagement), view_time is its
-- view's receive time and visit_start its visit's first view's, entry_*
-- the visit's entry page and where its first view came from, prev_page the
-- exit page this view moves the exit from, d_* the changes of the visit's
-- count, bounce, duration and the view's engaged time, and eng_from/eng_to,
-- scroll_from/scroll_to the view's engaged-time and scroll-depth buckets
-- before and after (EngagedBuckets, ScrollBuckets; -1 none).
--
-- ADD COLUMN with a constant DEFAULT rewrites nothing: rows written before
-- this migration read as views (kind 0) with no visit data (visit_set
-- false, every bucket -1). view_time and visit_start lie next to time
-- (a report comes within the hour of its view, a visit never spans a UTC
-- day), so they take time's codec.
ALTER TABLE views_raw
    ADD COLUMN IF NOT EXISTS kind               UInt8 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS engaged_ms         UInt32 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS scroll             UInt8 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS age_ms             UInt32 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS visit_set          Bool DEFAULT false,
    ADD COLUMN IF NOT EXISTS view_time          DateTime64(3, 'UTC') DEFAULT 0 CODEC(Delta, ZSTD),
    ADD COLUMN IF NOT EXISTS visit_start        DateTime64(3, 'UTC') DEFAULT 0 CODEC(Delta, ZSTD),
    ADD COLUMN IF NOT EXISTS entry_page         String DEFAULT '',
    ADD COLUMN IF NOT EXISTS entry_ref_host     String DEFAULT '',
    ADD COLUMN IF NOT EXISTS entry_ref_source   LowCardinality(String) DEFAULT '',
    ADD COLUMN IF NOT EXISTS entry_utm_source   LowCardinality(String) DEFAULT '',
    ADD COLUMN IF NOT EXISTS entry_utm_medium   LowCardinality(String) DEFAULT '',
    ADD COLUMN IF NOT EXISTS entry_utm_campaign String DEFAULT '',
    ADD COLUMN IF NOT EXISTS prev_page          String DEFAULT '',
    ADD COLUMN IF NOT EXISTS d_visits           Int8 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS d_bounces          Int8 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS d_visit_ms         Int32 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS d_engaged_ms       Int32 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS eng_from           Int8 DEFAULT -1,
    ADD COLUMN IF NOT EXISTS eng_to             Int8 DEFAULT -1,
    ADD COLUMN IF NOT EXISTS scroll_from        Int8 DEFAULT -1,
    ADD COLUMN IF NOT EXISTS scroll_to          Int8 DEFAULT -1;

-- The columns the views read (queries/feed.sql names them): kind, for
-- every view, and the derived ones engagement_rollup_mv sums. The raw
-- engaged_ms, scroll and age_ms stay in views_raw: no rollup reads them.
ALTER TABLE views_feed
    ADD COLUMN IF NOT EXISTS kind               UInt8 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS visit_set          Bool DEFAULT false,
    ADD COLUMN IF NOT EXISTS view_time          DateTime64(3, 'UTC') DEFAULT 0,
    ADD COLUMN IF NOT EXISTS visit_start        DateTime64(3, 'UTC') DEFAULT 0,
    ADD COLUMN IF NOT EXISTS entry_page         String DEFAULT '',
    ADD COLUMN IF NOT EXISTS entry_ref_host     String DEFAULT '',
    ADD COLUMN IF NOT EXISTS entry_ref_source   LowCardinality(String) DEFAULT '',
    ADD COLUMN IF NOT EXISTS entry_utm_source   LowCardinality(String) DEFAULT '',
    ADD COLUMN IF NOT EXISTS entry_utm_medium   LowCardinality(String) DEFAULT '',
    ADD COLUMN IF NOT EXISTS entry_utm_campaign String DEFAULT '',
    ADD COLUMN IF NOT EXISTS prev_page          String DEFAULT '',
    ADD COLUMN IF NOT EXISTS d_visits           Int8 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS d_bounces          Int8 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS d_visit_ms         Int32 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS d_engaged_ms       Int32 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS eng_from           Int8 DEFAULT -1,
    ADD COLUMN IF NOT EXISTS eng_to             Int8 DEFAULT -1,
    ADD COLUMN IF NOT EXISTS scroll_from        Int8 DEFAULT -1,
    ADD COLUMN IF NOT EXISTS scroll_to          Int8 DEFAULT -1;

-- The views of views only: an engagement report (kind 1) is no view,
-- accepted or rejected (docs/engagement.md: rejected reports are counted
-- apart from rejected views). The SELECTs are migration 012's (019's for
-- rejected_rollup_mv) with kind = 0 added, so a view row counts exactly
-- as before. As for 012: stop every validator before upgrading a server
-- deployment (a feed between a DROP and its CREATE would miss that
-- rollup); `viewcount serve` migrates before it validates. Nothing to
-- copy: no row before this migration is an engagement.
DROP VIEW IF EXISTS page_rollup_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS page_rollup_mv TO page_rollup AS
SELECT
    g.1 AS grain,
    site,
    page,
    g.2 AS bucket,
    count() AS views,
    uniqCombined64State(visitor) AS uniques
FROM views_feed
ARRAY JOIN [
    (1, toStartOfMinute(toDateTime(time, 'UTC'))), -- 1..4: the grain's Enum8 value
    (2, toStartOfHour(toDateTime(time, 'UTC'))),
    (3, toStartOfDay(toDateTime(time, 'UTC'))),
    (4, toDateTime(0, 'UTC'))
] AS g
WHERE verdict = 'valid' AND kind = 0
GROUP BY grain, site, page, bucket;

DROP VIEW IF EXISTS dim_rollup_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS dim_rollup_mv TO dim_rollup AS
SELECT
    r.1 AS grain,
    site,
    r.2 AS dim,
    r.3 AS page,
    r.4 AS value,
    multiIf(r.1 = 1, m, r.1 = 2, toStartOfHour(m), toStartOfDay(m)) AS bucket,
    sum(c) AS views,
    uniqCombined64MergeState(12)(s) AS uniques
FROM
(
    SELECT site, toStartOfMinute(toDateTime(time, 'UTC')) AS m, verdict, views_feed.page AS p,
        ref_source, ref_host, utm_source, utm_medium, utm_campaign, browser, os, device, country, screen,
        count() AS c, uniqCombined64State(12)(visitor) AS s
    FROM views_feed
    WHERE kind = 0
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
        [(2, 'page', '', p), (3, 'page', '', p)],
        [(2, 'reason', p, toString(verdict)), (2, 'filtered_page', '', p), (3, 'filtered_page', '', p)]) AS r
GROUP BY grain, site, dim, page, value, bucket;

DROP VIEW IF EXISTS page_views_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS page_views_mv TO page_views AS
SELECT site, page, toDateTime(time, 'UTC') AS time, visitor,
    ref_source, ref_host, utm_source, utm_medium, utm_campaign, browser, os, device, country, screen
FROM views_feed
WHERE verdict = 'valid' AND kind = 0;

DROP VIEW IF EXISTS rejected_rollup_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS rejected_rollup_mv TO rejected_rollup AS
SELECT
    site,
    verdict,
    toStartOfHour(toDateTime(time, 'UTC')) AS time,
    if(length(views_feed.ua) <= 300, views_feed.ua, leftUTF8(views_feed.ua, lengthUTF8(left(views_feed.ua, 301)) - 1)) AS ua,
    length(views_feed.ua) > 300 AS ua_cut,
    browser,
    device,
    if(verdict = 'datacenter', views_feed.asn, 0) AS asn,
    if(verdict = 'foreign_origin', views_feed.origin, '') AS origin,
    count() AS events,
    max(views_feed.time) AS last
FROM views_feed
WHERE verdict != 'valid' AND kind = 0
GROUP BY site, verdict, time, ua, ua_cut, browser, device, asn, origin;

-- engagement_rollup: the engagement and visit figures per site, UTC hour
-- and day, dimension and value, summed from the rows' deltas (so a
-- later report only ever adds). Rows, by dim (docs/engagement.md,
-- "Storage"):
--   engagement figures, at the hour and day of the view (view_time), by
--   the view's own dimensions: total (value ''), page, source
--   (ref_source), referrer (ref_host), utm_source, utm_medium,
--   utm_campaign, browser, os, device, country, screen;
--     engagements   accepted engagement reports
--     engaged_ms    engaged time added (sum of d_engaged_ms)
--     engaged_hist  views per engaged-time bucket (EngagedBuckets: +1 at
--                   a view's new bucket, -1 at its old one)
--     scroll_hist   views per scroll-depth bucket (ScrollBuckets), alike
--   visit figures, at the hour and day of the visit's first view
--   (visit_start), by the visit's entry: total, entry_page, source
--   (entry_ref_source), referrer (entry_ref_host), utm_* (entry_utm_*),
--   and by the row's own browser, os, device, country, screen;
--     visits, bounces, visit_ms (sums of d_visits, d_bounces, d_visit_ms)
--   exit_page (value = page), at the visit's first view: exits, +1 for the
--   page of each counted view, -1 for the prev_page it takes the exit from;
--   engagement_reason (value = verdict), at the report's own hour and day:
--   rejected, the rejected engagement reports.
-- A dim's rows may carry both kinds of figures (source, total, …): they
-- are different columns, summed apart.
--
-- AggregatingMergeTree with SimpleAggregateFunction columns, as the other
-- rollups: merges add the sums and sumMap the histograms (a histogram is
-- sparse: a report moves a view from one bucket to another, so a row of a
-- feed holds a few entries where fixed arrays would hold every bucket).
-- Not SummingMergeTree: on chDB its merge dropped a row whose Map still
-- held a non-zero entry once the row's numbers summed to zero. Merges can
-- leave an entry at 0 (a bucket every view has moved out of): readers
-- sum the values per key and ignore zeros. Signed: a row of one feed can
-- hold a negative part of a sum (a bounce undone, an exit moved).
--
-- Not partitioned, for migration 004's reason (one part per feed), and
-- small rows (no sketches), so the default granules. ORDER BY (site, dim,
-- grain, bucket, value): every read names a site, a dim and a grain, then
-- a bucket range.
CREATE TABLE IF NOT EXISTS engagement_rollup
(
    grain        Enum8('hour' = 2, 'day' = 3),
    site         LowCardinality(String),
    dim          LowCardinality(String),
    value        String,
    bucket       DateTime('UTC'),
    engagements  SimpleAggregateFunction(sum, Int64),
    engaged_ms   SimpleAggregateFunction(sum, Int64),
    engaged_hist SimpleAggregateFunction(sumMap, Map(UInt8, Int64)),
    scroll_hist  SimpleAggregateFunction(sumMap, Map(UInt8, Int64)),
    visits       SimpleAggregateFunction(sum, Int64),
    bounces      SimpleAggregateFunction(sum, Int64),
    visit_ms     SimpleAggregateFunction(sum, Int64),
    exits        SimpleAggregateFunction(sum, Int64),
    rejected     SimpleAggregateFunction(sum, Int64)
)
ENGINE = AggregatingMergeTree
ORDER BY (site, dim, grain, bucket, value)
SETTINGS non_replicated_deduplication_window = 10000, min_rows_for_wide_part = 1000000;

-- The innermost query turns each row into its roles (r): 1 its engagement
-- figures, 2 its visit figures, 3 the exit it takes (its page, +1), 4 the
-- exit it moves away (prev_page, -1), 5 a rejected report; a row with no
-- role is dropped (a rejected view, a verdict the visit stage did not
-- decide). Each role names its hour (h), its page (p: page, entry_page,
-- page, prev_page, verdict) and its dimensions (the view's own, or the
-- visit's entry for role 2; none for 3-5). The middle query aggregates the
-- feed by every dimension and by page at once (GROUPING SETS, as
-- dim_rollup_mv does: a feed holds few combinations), leaving out the
-- useless dimension groups of roles 3-5; the outer fans each group out
-- into its rows and drops those whose sums are all zero.
CREATE MATERIALIZED VIEW IF NOT EXISTS engagement_rollup_mv TO engagement_rollup AS
SELECT
    f.1 AS grain,
    site,
    f.2 AS dim,
    f.3 AS value,
    if(f.1 = 2, h, toStartOfDay(h)) AS bucket,
    sum(n_engagements) AS engagements,
    sum(n_engaged_ms) AS engaged_ms,
    mapFilter((k, v) -> v != 0, sumMap(n_engaged_hist)) AS engaged_hist,
    mapFilter((k, v) -> v != 0, sumMap(n_scroll_hist)) AS scroll_hist,
    sum(n_visits) AS visits,
    sum(n_bounces) AS bounces,
    sum(n_visit_ms) AS visit_ms,
    sum(n_exits) AS exits,
    sum(n_rejected) AS rejected
FROM
(
    SELECT site, r, h, p, src, host, us, um, uc, b, o, d, c, sc, grouping(p) = 0 AS by_page,
        toInt64(countIf(r = 1 AND kind = 1)) AS n_engagements,
        sumIf(toInt64(d_engaged_ms), r = 1) AS n_engaged_ms,
        CAST(sumMapIf([toUInt8(greatest(eng_to, 0)), toUInt8(greatest(eng_from, 0))],
            [toInt64(eng_to >= 0), -toInt64(eng_from >= 0)], r = 1), 'Map(UInt8, Int64)') AS n_engaged_hist,
        CAST(sumMapIf([toUInt8(greatest(scroll_to, 0)), toUInt8(greatest(scroll_from, 0))],
            [toInt64(scroll_to >= 0), -toInt64(scroll_from >= 0)], r = 1), 'Map(UInt8, Int64)') AS n_scroll_hist,
        sumIf(toInt64(d_visits), r = 2) AS n_visits,
        sumIf(toInt64(d_bounces), r = 2) AS n_bounces,
        sumIf(toInt64(d_visit_ms), r = 2) AS n_visit_ms,
        toInt64(countIf(r = 3)) - toInt64(countIf(r = 4)) AS n_exits,
        toInt64(countIf(r = 5)) AS n_rejected
    FROM
    (
        WITH verdict = 'valid' AND visit_set AS ok
        SELECT site, kind, d_engaged_ms, eng_from, eng_to, scroll_from, scroll_to, d_visits, d_bounces, d_visit_ms, r,
            toStartOfHour(toDateTime(multiIf(r = 1, view_time, r = 5, time, visit_start), 'UTC')) AS h,
            multiIf(r = 2, entry_page, r = 4, prev_page, r = 5, toString(verdict), views_feed.page) AS p,
            multiIf(r = 1, toString(ref_source), r = 2, toString(entry_ref_source), '') AS src,
            multiIf(r = 1, ref_host, r = 2, entry_ref_host, '') AS host,
            multiIf(r = 1, toString(utm_source), r = 2, toString(entry_utm_source), '') AS us,
            multiIf(r = 1, toString(utm_medium), r = 2, toString(entry_utm_medium), '') AS um,
            multiIf(r = 1, utm_campaign, r = 2, entry_utm_campaign, '') AS uc,
            if(r <= 2, toString(browser), '') AS b,
            if(r <= 2, toString(os), '') AS o,
            if(r <= 2, toString(device), '') AS d,
            if(r <= 2, toString(country), '') AS c,
            if(r <= 2, toString(screen), '') AS sc
        FROM views_feed
        ARRAY JOIN arrayFilter(x -> x != 0, [
            if(ok AND (kind = 1 OR d_engaged_ms != 0 OR eng_from != eng_to OR scroll_from != scroll_to), 1, 0),
            if(ok AND (d_visits != 0 OR d_bounces != 0 OR d_visit_ms != 0), 2, 0),
            if(ok AND kind = 0, 3, 0),
            if(ok AND prev_page != '', 4, 0),
            if(kind = 1 AND verdict != 'valid', 5, 0)]) AS r
        WHERE ok OR (kind = 1 AND verdict != 'valid')
    )
    GROUP BY GROUPING SETS ((site, r, h, src, host, us, um, uc, b, o, d, c, sc), (site, r, h, p))
    HAVING r <= 2 OR by_page
)
ARRAY JOIN multiIf(NOT by_page,
        [(2, 'total', ''), (3, 'total', ''),
             (2, 'source', src), (3, 'source', src),
             (2, 'referrer', host), (3, 'referrer', host),
             (2, 'utm_source', us), (3, 'utm_source', us),
             (2, 'utm_medium', um), (3, 'utm_medium', um),
             (2, 'utm_campaign', uc), (3, 'utm_campaign', uc),
             (2, 'browser', b), (3, 'browser', b),
             (2, 'os', o), (3, 'os', o),
             (2, 'device', d), (3, 'device', d),
             (2, 'country', c), (3, 'country', c),
             (2, 'screen', sc), (3, 'screen', sc)],
    r = 1, [(2, 'page', p), (3, 'page', p)],
    r = 2, [(2, 'entry_page', p), (3, 'entry_page', p)],
    r <= 4, [(2, 'exit_page', p), (3, 'exit_page', p)],
        [(2, 'engagement_reason', p), (3, 'engagement_reason', p)]) AS f
GROUP BY grain, site, dim, value, bucket
HAVING engagements != 0 OR engaged_ms != 0 OR notEmpty(engaged_hist) OR notEmpty(scroll_hist)
    OR visits != 0 OR bounces != 0 OR visit_ms != 0 OR exits != 0 OR rejected != 0;

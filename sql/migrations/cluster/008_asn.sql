DROP VIEW IF EXISTS dim_rollup_mv ON CLUSTER '{cluster}';

-- Migration 022 on a cluster: the AS-number dimension, dim_rollup_mv's
-- and engagement_rollup_mv's views on each host's views_feed_local
-- replaced by 022's (asn in the dimension grouping set and its hour and
-- day rows). views_feed_local has carried asn since cluster 005.
--
-- Unlike the single-node migration this copies nothing (as cluster 005):
-- the AS rows start with the first feed after the upgrade, and the
-- invalid-traffic report's lists by AS cover what was fed since (README,
-- "What does not work on a cluster yet"). Stop every validator before
-- upgrading: a feed between a DROP and its CREATE would miss that rollup.
CREATE MATERIALIZED VIEW IF NOT EXISTS dim_rollup_mv ON CLUSTER '{cluster}' TO dim_rollup_local AS
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
    SELECT site, toStartOfMinute(toDateTime(time, 'UTC')) AS m, verdict, views_feed_local.page AS p,
        ref_source, ref_host, utm_source, utm_medium, utm_campaign, browser, os, device, country, screen, asn,
        count() AS c, uniqCombined64State(12)(visitor) AS s
    FROM views_feed_local
    WHERE kind = 0
    GROUP BY GROUPING SETS ((site, m, verdict, ref_source, ref_host, utm_source, utm_medium, utm_campaign, browser, os, device, country, screen, asn),
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
             (2, 'screen', '', toString(screen)), (3, 'screen', '', toString(screen)),
             (2, 'asn', '', toString(asn)), (3, 'asn', '', toString(asn))],
    p = '',
        [(2, 'reason', '', toString(verdict)), (3, 'reason', '', toString(verdict))],
    verdict = 'valid',
        [(2, 'page', '', p), (3, 'page', '', p)],
        [(2, 'reason', p, toString(verdict)), (2, 'filtered_page', '', p), (3, 'filtered_page', '', p)]) AS r
GROUP BY grain, site, dim, page, value, bucket;

DROP VIEW IF EXISTS engagement_rollup_mv ON CLUSTER '{cluster}';

CREATE MATERIALIZED VIEW IF NOT EXISTS engagement_rollup_mv ON CLUSTER '{cluster}' TO engagement_rollup_local AS
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
    SELECT site, r, h, p, src, host, us, um, uc, b, o, d, c, sc, a, grouping(p) = 0 AS by_page,
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
            multiIf(r = 2, entry_page, r = 4, prev_page, r = 5, toString(verdict), views_feed_local.page) AS p,
            multiIf(r = 1, toString(ref_source), r = 2, toString(entry_ref_source), '') AS src,
            multiIf(r = 1, ref_host, r = 2, entry_ref_host, '') AS host,
            multiIf(r = 1, toString(utm_source), r = 2, toString(entry_utm_source), '') AS us,
            multiIf(r = 1, toString(utm_medium), r = 2, toString(entry_utm_medium), '') AS um,
            multiIf(r = 1, utm_campaign, r = 2, entry_utm_campaign, '') AS uc,
            if(r <= 2, toString(browser), '') AS b,
            if(r <= 2, toString(os), '') AS o,
            if(r <= 2, toString(device), '') AS d,
            if(r <= 2, toString(country), '') AS c,
            if(r <= 2, toString(screen), '') AS sc,
            if(r <= 2, toString(asn), '') AS a
        FROM views_feed_local
        ARRAY JOIN arrayFilter(x -> x != 0, [
            if(ok AND (kind = 1 OR d_engaged_ms != 0 OR eng_from != eng_to OR scroll_from != scroll_to), 1, 0),
            if(ok AND (d_visits != 0 OR d_bounces != 0 OR d_visit_ms != 0), 2, 0),
            if(ok AND kind = 0, 3, 0),
            if(ok AND prev_page != '', 4, 0),
            if(kind = 1 AND verdict != 'valid', 5, 0)]) AS r
        WHERE ok OR (kind = 1 AND verdict != 'valid')
    )
    GROUP BY GROUPING SETS ((site, r, h, src, host, us, um, uc, b, o, d, c, sc, a), (site, r, h, p))
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
             (2, 'screen', sc), (3, 'screen', sc),
             (2, 'asn', a), (3, 'asn', a)],
    r = 1, [(2, 'page', p), (3, 'page', p)],
    r = 2, [(2, 'entry_page', p), (3, 'entry_page', p)],
    r <= 4, [(2, 'exit_page', p), (3, 'exit_page', p)],
        [(2, 'engagement_reason', p), (3, 'engagement_reason', p)]) AS f
GROUP BY grain, site, dim, value, bucket
HAVING engagements != 0 OR engaged_ms != 0 OR notEmpty(engaged_hist) OR notEmpty(scroll_hist)
    OR visits != 0 OR bounces != 0 OR visit_ms != 0 OR exits != 0 OR rejected != 0;

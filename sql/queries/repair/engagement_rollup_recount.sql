-- engagement_rollup_recount: the rows of engagement_rollup in one month
-- ({month:UInt32}, YYYYMM, from engagement_rollup_months) that differ from
-- a recount (`viewcount check`, `viewcount reconcile`), at most {limit} of
-- them, each with the number of differing rows of the month in all.
-- Read-only.
--
-- The recount is what engagement_rollup_fill would build: views_raw from
-- {cutoff} on, counted by engagement_rollup_mv's SELECT (migration 022).
-- Before the cutoff, where the raw retention removed events, the rows are
-- their own truth (engagement_rollup_prepare keeps them), so only rows
-- from the cutoff on are compared. Every figure must be equal; a
-- histogram is compared without its zero entries (a merge leaves a bucket
-- every view moved out of at 0), as its text, and a row whose figures are
-- all zero is no row (the view writes none; merges can leave one).
SELECT
    grain,
    site,
    dim,
    value,
    toString(bucket) AS bucket,
    stored_engagements, recount_engagements,
    stored_engaged_ms, recount_engaged_ms,
    stored_engaged_hist, recount_engaged_hist,
    stored_scroll_hist, recount_scroll_hist,
    stored_visits, recount_visits,
    stored_bounces, recount_bounces,
    stored_visit_ms, recount_visit_ms,
    stored_exits, recount_exits,
    stored_rejected, recount_rejected,
    count() OVER () AS differing
FROM
(
    SELECT toString(grain) AS grain, toString(site) AS site, toString(dim) AS dim, value, bucket,
           sum(engagements) AS stored_engagements,
           sum(engaged_ms) AS stored_engaged_ms,
           toString(mapFilter((k, v) -> v != 0, sumMap(engaged_hist))) AS stored_engaged_hist,
           toString(mapFilter((k, v) -> v != 0, sumMap(scroll_hist))) AS stored_scroll_hist,
           sum(visits) AS stored_visits,
           sum(bounces) AS stored_bounces,
           sum(visit_ms) AS stored_visit_ms,
           sum(exits) AS stored_exits,
           sum(rejected) AS stored_rejected
    FROM engagement_rollup
    WHERE bucket >= {cutoff:DateTime('UTC')} AND toYYYYMM(bucket) = {month:UInt32}
    GROUP BY grain, site, dim, value, bucket
    HAVING stored_engagements != 0 OR stored_engaged_ms != 0 OR stored_engaged_hist != '{}' OR stored_scroll_hist != '{}'
        OR stored_visits != 0 OR stored_bounces != 0 OR stored_visit_ms != 0 OR stored_exits != 0 OR stored_rejected != 0
) AS s
FULL OUTER JOIN
(
    -- grain: the view's, its Enum8 value 2 or 3 (hour, day).
    SELECT arrayElement(['', 'hour', 'day'], grain) AS grain, toString(site) AS site, dim, value, bucket,
           engagements AS recount_engagements,
           engaged_ms AS recount_engaged_ms,
           toString(engaged_hist) AS recount_engaged_hist,
           toString(scroll_hist) AS recount_scroll_hist,
           visits AS recount_visits,
           bounces AS recount_bounces,
           visit_ms AS recount_visit_ms,
           exits AS recount_exits,
           rejected AS recount_rejected
    FROM
    (
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
                    multiIf(r = 2, entry_page, r = 4, prev_page, r = 5, toString(verdict), views_raw.page) AS p,
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
                FROM views_raw
                ARRAY JOIN arrayFilter(x -> x != 0, [
                    if(ok AND (kind = 1 OR d_engaged_ms != 0 OR eng_from != eng_to OR scroll_from != scroll_to), 1, 0),
                    if(ok AND (d_visits != 0 OR d_bounces != 0 OR d_visit_ms != 0), 2, 0),
                    if(ok AND kind = 0, 3, 0),
                    if(ok AND prev_page != '', 4, 0),
                    if(kind = 1 AND verdict != 'valid', 5, 0)]) AS r
                WHERE (ok OR (kind = 1 AND verdict != 'valid'))
                  -- the rows whose figures can fall in the month: a figure's hour is
                  -- at most a day and the engagement horizon before its row's time
                  AND time >= makeDate(intDiv({month:UInt32}, 100), {month:UInt32} % 100, 1)
                  AND time < addDays(addMonths(makeDate(intDiv({month:UInt32}, 100), {month:UInt32} % 100, 1), 1), 2)
                  AND batch <= {fed:Map(UInt16, UInt64)}[partition]
            )
            WHERE toYYYYMM(h) = {month:UInt32} AND h >= {cutoff:DateTime('UTC')}
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
            OR visits != 0 OR bounces != 0 OR visit_ms != 0 OR exits != 0 OR rejected != 0
    )
) AS r USING (grain, site, dim, value, bucket)
WHERE (stored_engagements != recount_engagements OR stored_engaged_ms != recount_engaged_ms
    OR stored_engaged_hist != recount_engaged_hist OR stored_scroll_hist != recount_scroll_hist
    OR stored_visits != recount_visits OR stored_bounces != recount_bounces OR stored_visit_ms != recount_visit_ms
    OR stored_exits != recount_exits OR stored_rejected != recount_rejected)
  AND toDateTime(bucket, 'UTC') >= {from:DateTime('UTC')} AND toDateTime(bucket, 'UTC') < {to:DateTime('UTC')}
ORDER BY site, dim, grain, bucket, value
LIMIT {limit:UInt32}
-- As engagement_rollup_fill: a month's GROUP BY spills to disk past 1 GB.
SETTINGS max_bytes_before_external_group_by = 1000000000

-- engagement_rollup_fill: recounts one month ({month:UInt32}, YYYYMM) of
-- engagement_rollup's buckets from views_raw into the staging table, from
-- {cutoff} on. The SELECT is engagement_rollup_mv's (migration 022) with
-- only the month, the cutoff, the feed's progress and the scope added, so
-- the rebuilt rows are the rows the materialized view would have written:
-- the view runs per feed, this per month, and the engine adds the rows of
-- one key from different inserts.
--
-- Unlike the other fills a month here is the month of the figures'
-- buckets, not of the rows' time: a report received after midnight counts
-- in its view's day (and on the 1st, its month), so the rows read run two
-- days into the next month (a visit never spans a UTC day, a report comes
-- within the horizon of its view), and a figure is kept when its hour lies
-- in the month, in [{cutoff}, {to}) and, with {site} (not ''), of that
-- site. A figure's hour is never after its row's time, so nothing from
-- before the cutoff is read.
INSERT INTO engagement_rollup_rebuild
SETTINGS insert_deduplicate = 0, max_bytes_before_external_group_by = 1000000000
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
          AND ({site:String} = '' OR site = {site:String})
    )
    WHERE toYYYYMM(h) = {month:UInt32} AND h >= {cutoff:DateTime('UTC')} AND h < {to:DateTime('UTC')}
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

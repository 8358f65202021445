-- Invalid traffic by reason and day: each reason's rejected events, their
-- distinct visitor ids (one noisy visitor or a broad pattern?) and their
-- share of all the day's events, valid and rejected.
--
-- Reads dim_rollup's day rows: dim 'reason' (rejected events per
-- verdict) and dim 'total' (valid views) for the denominator; a few rows
-- per day instead of every event. views_raw has the same events with the
-- signals behind each verdict (invalid_audit.sql).
--
-- Parameters: {site:String}, {from:Date}, {to:Date} (UTC days, both
-- included).
SELECT day, reason, events, visitors, share
FROM
(
    SELECT
        day,
        reason,
        events,
        visitors,
        round(events / sum(events) OVER (PARTITION BY day), 4) AS share
    FROM
    (
        SELECT
            toDate(bucket) AS day,
            if(dim = 'total', 'valid', value) AS reason,
            sum(views) AS events,
            uniqCombined64Merge(12)(uniques) AS visitors
        FROM dim_rollup
        WHERE site = {site:String}
          AND dim IN ('total', 'reason')
          AND page = ''
          AND grain = 'day'
          AND toDate(bucket) BETWEEN {from:Date} AND {to:Date}
        GROUP BY day, reason
    )
)
WHERE reason != 'valid'
ORDER BY day, events DESC, reason

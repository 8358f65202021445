-- page_rollup_recount: the rows of page_rollup that differ from a recount
-- (`viewcount check`), at most {limit} of them, each with the number of
-- differing rows in all. Read-only.
--
-- The recount is what page_rollup_prepare + page_rollup_fill would build:
-- views_raw from {cutoff} on, counted as page_rollup_mv counts (migration
-- 004); before the cutoff, where the raw retention removed events, the
-- minute, hour and day rows are taken as they are, and the all-time rows
-- must equal the merge of those days plus the recount. Views compare
-- exactly; uniques compare the estimates, which are equal for the same set
-- of visitors however the sketches were merged, except for exactly 4096
-- visitors: a uniqCombined64 sketch (precision 17) is an exact set of up
-- to 4096 ids, and one holding 4096 turns into a HyperLogLog on the next
-- id merged into it, even one it holds, so one merge order leaves the
-- exact 4096 and another an estimate (dim_rollup_recount has the details).
-- A row where either side reads 4096 compares its views only.
SELECT
    grain,
    site,
    page,
    toString(bucket) AS bucket,
    stored_views,
    recount_views,
    stored_uniques,
    recount_uniques,
    count() OVER () AS differing
FROM
(
    SELECT toString(grain) AS grain, site, page, bucket,
           toUInt64(sum(views)) AS stored_views,
           toUInt64(uniqCombined64Merge(uniques)) AS stored_uniques
    FROM page_rollup
    GROUP BY grain, site, page, bucket
) AS s
FULL OUTER JOIN
(
    SELECT grain, site, page, bucket,
           toUInt64(sum(views)) AS recount_views,
           toUInt64(uniqCombined64Merge(uniques)) AS recount_uniques
    FROM
    (
        SELECT toString(grain) AS grain, site, page, bucket, views, uniques
        FROM page_rollup
        WHERE grain != 'total' AND bucket < {cutoff:DateTime('UTC')}

        UNION ALL

        -- No aliases here: 'total' AS grain would turn the WHERE below
        -- into 'total' = 'day' (ClickHouse resolves aliases in WHERE); a
        -- UNION takes its column names from the first SELECT.
        SELECT 'total', site, page, toDateTime(0, 'UTC'),
               sum(views), uniqCombined64MergeState(uniques)
        FROM page_rollup
        WHERE grain = 'day' AND bucket < {cutoff:DateTime('UTC')}
        GROUP BY site, page

        UNION ALL

        SELECT g.1 AS grain, site, page, g.2 AS bucket,
               count() AS views, uniqCombined64State(visitor) AS uniques
        FROM views_raw
        ARRAY JOIN [
            ('minute', toStartOfMinute(toDateTime(time, 'UTC'))),
            ('hour', toStartOfHour(toDateTime(time, 'UTC'))),
            ('day', toStartOfDay(toDateTime(time, 'UTC'))),
            ('total', toDateTime(0, 'UTC'))
        ] AS g
        WHERE verdict = 'valid' AND kind = 0 AND time >= {cutoff:DateTime('UTC')}
          AND batch <= {fed:Map(UInt16, UInt64)}[partition]
        GROUP BY grain, site, page, bucket
    )
    GROUP BY grain, site, page, bucket
) AS r USING (grain, site, page, bucket)
WHERE (stored_views != recount_views
   OR (stored_uniques != recount_uniques AND stored_uniques != 4096 AND recount_uniques != 4096))
  AND (grain = 'total' OR (toDateTime(bucket, 'UTC') >= {from:DateTime('UTC')} AND toDateTime(bucket, 'UTC') < {to:DateTime('UTC')}))
ORDER BY site, grain, page, bucket
LIMIT {limit:UInt32}

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
-- of visitors however the sketches were merged.
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
        WHERE verdict = 'valid' AND time >= {cutoff:DateTime('UTC')}
        GROUP BY grain, site, page, bucket
    )
    GROUP BY grain, site, page, bucket
) AS r USING (grain, site, page, bucket)
WHERE stored_views != recount_views OR stored_uniques != recount_uniques
ORDER BY site, grain, page, bucket
LIMIT {limit:UInt32}

-- engagement_rollup_months: the months (YYYYMM) engagement_rollup_recount
-- compares one at a time, from {cutoff} on: every month views_raw holds
-- (its partitions, from the part list) or engagement_rollup has rows in
-- (it is not partitioned: this reads its bucket column), so rows of a
-- month whose events are gone are compared too. A month at a time bounds
-- the recount's memory by a month's keys; every row lies inside one UTC
-- day, so nothing is compared across months.
SELECT month
FROM
(
    SELECT toUInt32OrZero(partition) AS month
    FROM system.parts
    WHERE database = currentDatabase() AND table = 'views_raw' AND active

    UNION DISTINCT

    SELECT DISTINCT toYYYYMM(bucket) AS month
    FROM engagement_rollup
    WHERE bucket >= {cutoff:DateTime('UTC')}
)
WHERE month >= toYYYYMM({cutoff:DateTime('UTC')})
ORDER BY month

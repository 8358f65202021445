-- rejected_rollup_months: the months (YYYYMM) rejected_rollup_recount
-- compares one at a time, from {cutoff} on: every month views_raw or
-- rejected_rollup holds (their partitions, from the part list), so rows of
-- a month whose events are gone are compared too. A month at a time bounds
-- the recount's memory by a month's keys (up to a row per rejected event,
-- for a network rotating its user agents); every row lies inside one
-- month, so nothing is compared across months.
SELECT month
FROM
(
    SELECT DISTINCT toUInt32OrZero(partition) AS month
    FROM system.parts
    WHERE database = currentDatabase() AND table IN ('views_raw', 'rejected_rollup') AND active
)
WHERE month >= toYYYYMM({cutoff:DateTime('UTC')})
ORDER BY month

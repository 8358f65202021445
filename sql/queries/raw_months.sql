-- raw_months: views_raw's partitions (months, toYYYYMM of the event time)
-- with their row counts, from the part list (no scan), so a rebuild can go
-- a month at a time and say how far it is.
SELECT
    partition AS month,
    toUInt64(sum(rows)) AS rows
FROM system.parts
WHERE database = currentDatabase() AND table = 'views_raw' AND active
GROUP BY partition
ORDER BY partition

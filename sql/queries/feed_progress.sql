-- feed_progress: each partition's latest feed (rollup_feed, migrations 012
-- and 020) → partition, first, last, since (Unix ms), completed.
-- Everything of the partition stored by batches up to last has been fed,
-- or is this feed; everything up to completed has been fed (0: no feed
-- known to have completed).
SELECT partition, argMax(first, last), max(last), toUnixTimestamp64Milli(argMax(since, last)), maxIf(last, done = 1) AS completed
FROM rollup_feed
GROUP BY partition
ORDER BY partition

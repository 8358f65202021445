-- feed_progress: each partition's latest feed (rollup_feed, migration 012)
-- → partition, first, last, since (Unix ms). Everything of the partition
-- stored by batches up to last has been fed, or is this feed.
SELECT partition, argMax(first, last), max(last), toUnixTimestamp64Milli(argMax(since, last))
FROM rollup_feed
GROUP BY partition
ORDER BY partition

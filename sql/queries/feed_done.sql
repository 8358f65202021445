-- feed_done: records a feed again once its copy has returned (rollup_feed,
-- migrations 012 and 020): everything of the partition stored by batches
-- up to last is in the rollups. Params as feed_record's.
INSERT INTO rollup_feed (partition, first, last, since, done)
SELECT {partition:UInt16}, {first:UInt64}, {last:UInt64}, fromUnixTimestamp64Milli({since:Int64}, 'UTC'), 1

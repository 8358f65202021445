-- feed_record: records a feed before it runs (rollup_feed, migration 012).
-- Params partition, first, last, since (Unix ms). INSERT … SELECT rather
-- than VALUES: the engine reads VALUES as data, where no query parameter
-- is substituted (chDB then reads the rest from the process's stdin).
INSERT INTO rollup_feed (partition, first, last, since)
SELECT {partition:UInt16}, {first:UInt64}, {last:UInt64}, fromUnixTimestamp64Milli({since:Int64}, 'UTC')

-- raw_retention: the days {table}'s TTL (views_raw's, page_views' or
-- rejected_rollup's) keeps rows (0 = no TTL), read back from the table
-- definition. ClickHouse prints the interval as
-- toIntervalDay(400) when it was written literally (migration 005) and as
-- toIntervalDay(_CAST(400, 'UInt32')) when it was bound as a parameter
-- (raw_retention_set), so both spellings are read.
SELECT toUInt32OrZero(extract(engine_full, 'TTL toDateTime\\(time\\) \\+ toIntervalDay\\((?:_CAST\\()?(\\d+)')) AS days
FROM system.tables
WHERE database = currentDatabase() AND name = {table:String}

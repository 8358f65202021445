-- raw_retention_set: rows of {table} (views_raw, page_views or
-- rejected_rollup, whose time is the hour) expire {days} days after their
-- event time. ClickHouse binds the parameter before it stores the table
-- definition, so the stored TTL holds the number, not the placeholder.
-- Changing the TTL rewrites the TTL information of every existing part
-- once (materialize_ttl_after_modify), so it runs only when the configured
-- value differs from the stored one.
ALTER TABLE {table:Identifier} MODIFY TTL toDateTime(time) + toIntervalDay({days:UInt32})

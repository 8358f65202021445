-- Raw events expire; the rollups keep their counts.
--
-- views_raw is the audit trail (every event, its verdict and signals) and
-- the source a rollup is rebuilt from; the rollups are what counts are
-- read from. Keeping every raw event forever grows the store without
-- bound, so rows older than the raw retention (default 400 days: a year
-- and a month of audits and rebuilds) are removed by ClickHouse's TTL.
-- Materialized views fire on insert only, so a row leaving views_raw takes
-- nothing from page_rollup.
--
-- ttl_only_drop_parts: a part goes once all its rows expired, instead of
-- every TTL merge (each 4 hours by default) rewriting the oldest month's
-- parts without their expired rows. views_raw is partitioned by month, so
-- events stay at most about a month past the retention, and removing them
-- costs nothing but deleting files.
--
-- `viewcount serve --raw-retention` changes the interval at start
-- (rollup.ApplyRawRetention, queries/raw_retention_set.sql). toDateTime:
-- the TTL works on whole seconds. Rerunning these statements sets the same
-- values again.
ALTER TABLE views_raw MODIFY SETTING ttl_only_drop_parts = 1;

ALTER TABLE views_raw MODIFY TTL toDateTime(time) + INTERVAL 400 DAY;

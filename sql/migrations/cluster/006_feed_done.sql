-- Migration 020 on a cluster: rollup_feed.done, on the local tables and
-- on the Distributed one over them.
ALTER TABLE rollup_feed_local ON CLUSTER '{cluster}'
    ADD COLUMN IF NOT EXISTS done UInt8 DEFAULT 0;

ALTER TABLE rollup_feed ON CLUSTER '{cluster}'
    ADD COLUMN IF NOT EXISTS done UInt8 DEFAULT 0;

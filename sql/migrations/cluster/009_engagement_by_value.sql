-- Migration 023 on a cluster: engagement_rollup_local's projection sorted
-- by value before time, for the reads of one value or a few (see
-- ../023_engagement_by_value.sql for why and what a merge does with it).
-- The Distributed engagement_rollup stores nothing and needs none: each
-- host's reads of its local table use it.
ALTER TABLE engagement_rollup_local ON CLUSTER '{cluster}'
    MODIFY SETTING deduplicate_merge_projection_mode = 'rebuild';

ALTER TABLE engagement_rollup_local ON CLUSTER '{cluster}'
    ADD PROJECTION IF NOT EXISTS by_value (SELECT * ORDER BY site, dim, value, grain, bucket);

ALTER TABLE engagement_rollup_local ON CLUSTER '{cluster}' MATERIALIZE PROJECTION IF EXISTS by_value;

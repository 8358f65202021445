-- Migration 024 on a cluster: views_raw_local merges less eagerly (see
-- ../024_raw_merges.sql for why and what it costs). The Distributed
-- views_raw stores nothing and merges nothing.
ALTER TABLE views_raw_local ON CLUSTER '{cluster}' MODIFY SETTING merge_selector_base = 30;

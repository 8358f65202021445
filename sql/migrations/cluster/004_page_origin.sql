-- Migration 018 on a cluster: the page host of each view, on the local
-- tables and on the Distributed one over them.
ALTER TABLE views_raw_local ON CLUSTER '{cluster}'
    ADD COLUMN IF NOT EXISTS origin LowCardinality(String) DEFAULT '';

ALTER TABLE views_raw ON CLUSTER '{cluster}'
    ADD COLUMN IF NOT EXISTS origin LowCardinality(String) DEFAULT '';

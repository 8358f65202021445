-- Migration 017 on a cluster: the operators' corrections and their audit
-- trail. Small and read whole (every validator loads those in force at
-- each partition's start), through the Distributed table from any host;
-- sharded by site like the rollups.
CREATE TABLE IF NOT EXISTS corrections_local ON CLUSTER '{cluster}'
(
    id         String,
    at         DateTime64(3, 'UTC') DEFAULT now64(3),
    action     LowCardinality(String),
    who        String,
    why        String,
    site       String,
    kind       LowCardinality(String),
    value      String,
    range_from DateTime64(3, 'UTC'),
    range_to   DateTime64(3, 'UTC')
)
ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/{database}/corrections', '{replica}')
ORDER BY (id, at)
SETTINGS replicated_deduplication_window = 100;

CREATE TABLE IF NOT EXISTS corrections ON CLUSTER '{cluster}'
(
    id         String,
    at         DateTime64(3, 'UTC') DEFAULT now64(3),
    action     LowCardinality(String),
    who        String,
    why        String,
    site       String,
    kind       LowCardinality(String),
    value      String,
    range_from DateTime64(3, 'UTC'),
    range_to   DateTime64(3, 'UTC')
)
ENGINE = Distributed('{cluster}', currentDatabase(), corrections_local, cityHash64(site));

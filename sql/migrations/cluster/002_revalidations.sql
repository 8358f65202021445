-- Migration 016 on a cluster: the audit trail of revalidations, one row
-- per step of each run. Sharded by site like the rollups (a run is one
-- site's), read through the Distributed table from any host.
CREATE TABLE IF NOT EXISTS revalidations_local ON CLUSTER '{cluster}'
(
    id         String,
    at         DateTime64(3, 'UTC') DEFAULT now64(3),
    state      LowCardinality(String),
    site       String,
    range_from DateTime64(3, 'UTC'),
    range_to   DateTime64(3, 'UTC'),
    rules      String,
    who        String,
    judged     UInt64,
    changed    UInt64
)
ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/{database}/revalidations', '{replica}')
ORDER BY (site, at)
SETTINGS replicated_deduplication_window = 100;

CREATE TABLE IF NOT EXISTS revalidations ON CLUSTER '{cluster}'
(
    id         String,
    at         DateTime64(3, 'UTC') DEFAULT now64(3),
    state      LowCardinality(String),
    site       String,
    range_from DateTime64(3, 'UTC'),
    range_to   DateTime64(3, 'UTC'),
    rules      String,
    who        String,
    judged     UInt64,
    changed    UInt64
)
ENGINE = Distributed('{cluster}', currentDatabase(), revalidations_local, cityHash64(site));

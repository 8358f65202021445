-- cluster_migrations_init: the table rollup.MigrateCluster records the
-- applied sql/cluster files in. One Keeper path for every host (no
-- {shard} in it, and a replica name that holds the shard's): each host
-- holds every row, so any host it connects to
-- answers which versions are applied.
CREATE TABLE IF NOT EXISTS cluster_migrations ON CLUSTER '{cluster}'
(
    version    UInt32,
    name       String,
    applied_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplicatedMergeTree('/clickhouse/tables/all/{database}/cluster_migrations', '{shard}-{replica}')
ORDER BY version

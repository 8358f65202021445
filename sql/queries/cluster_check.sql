-- cluster_check: whether this server knows the cluster (its hosts in
-- remote_servers) and inserts into Distributed tables in the foreground
-- (distributed_foreground_insert = 1 in the user's profile): only then is
-- an insert acknowledged once every shard has its rows, so a retry with
-- the same deduplication token is dropped by each shard (sql/cluster).
-- db is the database the cluster schema goes into.
SELECT
    (SELECT count() FROM system.clusters WHERE cluster = {cluster:String}) AS hosts,
    toUInt8(getSetting('distributed_foreground_insert')) AS foreground,
    currentDatabase() AS db

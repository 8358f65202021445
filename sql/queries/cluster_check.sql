-- cluster_check: what rollup.MigrateCluster needs to know before it puts
-- the cluster schema (sql/cluster) on a cluster:
--   hosts       the cluster's hosts in this server's remote_servers (0: unknown cluster);
--   replicas    the most replicas a shard has;
--   foreground  distributed_foreground_insert in the user's profile: only
--               then is an insert acknowledged once every shard has its
--               rows, so a retry with the same token is dropped by each;
--   quorum      insert_quorum ('0', a number or 'auto'): with several
--               replicas, an insert must be on every replica before it is
--               acknowledged, or the feed's read of the batch just stored
--               can reach a replica that has not got it yet;
--   db          the database the schema goes into.
SELECT
    (SELECT count() FROM system.clusters WHERE cluster = {cluster:String}) AS hosts,
    (SELECT max(replica_num) FROM system.clusters WHERE cluster = {cluster:String}) AS replicas,
    toUInt8(getSetting('distributed_foreground_insert')) AS foreground,
    toString(getSetting('insert_quorum')) AS quorum,
    currentDatabase() AS db

-- raw_retention_set_cluster: raw_retention_set on a cluster: the TTL of
-- {table} (views_raw_local, page_views_local or rejected_rollup_local) on
-- every host. The Distributed tables above them store nothing and take no
-- TTL.
ALTER TABLE {table:Identifier} ON CLUSTER '{cluster}' MODIFY TTL toDateTime(time) + toIntervalDay({days:UInt32})

-- cluster_database: the database on every host of the cluster, before
-- the cluster schema's ON CLUSTER statements create tables in it.
CREATE DATABASE IF NOT EXISTS {db:Identifier} ON CLUSTER '{cluster}'

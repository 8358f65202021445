-- cluster_migrations_applied: versions of sql/cluster already applied, ascending.
SELECT DISTINCT version
FROM cluster_migrations
ORDER BY version

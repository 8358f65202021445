-- migrations_applied: versions already applied, ascending.
SELECT DISTINCT version
FROM schema_migrations
ORDER BY version

-- detached_parts: data parts of this database that ClickHouse set aside
-- because it could not trust them, and whose rows it therefore no longer
-- reads. broken / broken-on-start: a checksum, size or format check failed
-- (a truncated or corrupted file; broken-on-start when found while loading
-- the table); covered-by-broken: parts a broken merge result replaced;
-- unexpected / noquorum / broken-from-backup: replication and restore
-- leftovers; *-not-byte-identical: a replica's merge differed. Parts an
-- operator detached on purpose (reason '') and the engine's own transient
-- states (attaching, deleting, tmp-fetch, clone, ignored) are not damage.
SELECT
    table,
    name,
    reason,
    partition_id,
    bytes_on_disk,
    toString(modification_time) AS modified
FROM system.detached_parts
WHERE database = currentDatabase()
  AND reason IN ('broken', 'broken-on-start', 'covered-by-broken', 'unexpected', 'noquorum',
                 'broken-from-backup', 'merge-not-byte-identical', 'mutate-not-byte-identical')
ORDER BY table, name

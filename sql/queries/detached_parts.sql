-- detached_parts: data parts of this database that ClickHouse set aside
-- because it could not trust them. broken / broken-on-start: a checksum,
-- size or format check failed (a truncated or corrupted file;
-- broken-on-start when found while loading the table); covered-by-broken:
-- parts a broken merge result replaced; unexpected / noquorum /
-- broken-from-backup: replication and restore leftovers;
-- *-not-byte-identical: a replica's merge differed. Parts an operator
-- detached on purpose (reason '') and the engine's own transient states
-- (attaching, deleting, tmp-fetch, clone, ignored) are not damage.
--
-- covered: an active part of the same table and partition holds the same
-- block range, so the damaged part was an outdated one (already merged
-- into a newer part and waiting to be deleted, as after a crash) and no
-- row is missing. Only uncovered parts cost counts.
SELECT
    d.table AS table,
    d.name AS name,
    d.reason AS reason,
    d.partition_id AS partition_id,
    d.bytes_on_disk AS bytes_on_disk,
    toString(d.modification_time) AS modified,
    countIf(p.max_block_number > 0
            AND p.min_block_number <= ifNull(d.min_block_number, -1)
            AND p.max_block_number >= ifNull(d.max_block_number, -1)) > 0 AS covered
FROM system.detached_parts AS d
LEFT JOIN
(
    SELECT table, partition_id, min_block_number, max_block_number
    FROM system.parts
    WHERE database = currentDatabase() AND active
) AS p ON d.table = p.table AND d.partition_id = p.partition_id
WHERE d.database = currentDatabase()
  AND d.reason IN ('broken', 'broken-on-start', 'covered-by-broken', 'unexpected', 'noquorum',
                   'broken-from-backup', 'merge-not-byte-identical', 'mutate-not-byte-identical')
GROUP BY d.table, d.name, d.reason, d.partition_id, d.bytes_on_disk, d.modification_time
ORDER BY table, name

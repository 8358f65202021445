-- feed_backlog: per partition, the newest batch views_raw holds and the
-- rows stored by batches after the partition's latest feed → partition,
-- last, rows. For catching up with no validator running (repairs, tools,
-- tests); a full read of two small columns.
SELECT partition, max(batch) AS last,
    countIf(batch > {fed:Map(UInt16, UInt64)}[partition]) AS rows
FROM views_raw
WHERE batch > 0
GROUP BY partition
ORDER BY partition

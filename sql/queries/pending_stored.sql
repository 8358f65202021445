-- pending_stored: each partition's highest batch stored but not fed yet
-- (bounded like pending_unfed): the stream's messages after it are not
-- stored yet, the rest are.
SELECT partition, max(batch)
FROM views_raw
WHERE time >= fromUnixTimestamp64Milli({since:Int64}, 'UTC')
  AND batch > {fed:Map(UInt16, UInt64)}[partition]
GROUP BY partition

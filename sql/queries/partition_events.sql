-- partition_events: which events of one partition's stream range views_raw
-- holds, for `viewcount repair stream` to tell surviving stream messages
-- that were counted from those that were not (sequences may have been
-- reused, so the event id and time are compared, not only the sequence).
SELECT
    seq,
    idx,
    event_id,
    toUnixTimestamp64Milli(time) AS time_ms
FROM views_raw
WHERE partition = {partition:UInt16} AND seq BETWEEN {from:UInt64} AND {to:UInt64}
ORDER BY seq, idx

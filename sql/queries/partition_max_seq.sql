-- partition_max_seq: the highest stream sequence views_raw holds for one
-- partition, 0 when it holds none. A partition's progress record must never
-- be behind it (a resume would insert rows twice), and the stream's last
-- sequence must never be behind it (new events would reuse sequences).
-- Run once per partition start and by check/repair: it reads the two small
-- columns partition and seq (no index orders them; see BENCHMARKS.md for
-- its cost on a large table), which beats an extra materialized view that
-- would cost every insert a part.
SELECT toUInt64(max(seq)) AS seq
FROM views_raw
WHERE partition = {partition:UInt16}

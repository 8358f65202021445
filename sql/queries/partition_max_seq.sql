-- partition_max_seq: the highest stream sequence views_raw holds for one
-- partition above {after}, 0 when it holds none. A partition's progress
-- record must never be behind it (a resume would insert rows twice), and
-- the stream's last sequence must never be behind it (new events would
-- reuse sequences); the callers ask above the lower of the two, so any
-- answer but 0 is a finding.
-- Run once per partition start and by check/repair. The bound lets the
-- seq_minmax skip index (migration 006) pass over every part written
-- before the record: without it the query read the partition and seq
-- columns of the whole table (about 10 s per start at a billion rows;
-- docs/benchmarks/history/issue-09.md, "Progress check"). An extra
-- materialized view would cost every insert a part.
SELECT toUInt64(max(seq)) AS max_seq
FROM views_raw
WHERE partition = {partition:UInt16} AND seq > {after:UInt64}

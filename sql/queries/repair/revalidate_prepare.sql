-- revalidate_prepare: the table of a revalidation's changed verdicts,
-- looked up by (partition, seq, idx) while views_raw's months are
-- rewritten (revalidate_month). A Join table answers joinGet in memory:
-- changes are few next to the rows copied. Dropped first, so a rerun
-- starts from what it judged itself.
DROP TABLE IF EXISTS revalidate_changes SYNC;

CREATE TABLE revalidate_changes
(
    partition UInt16,
    seq       UInt64,
    idx       UInt32,
    verdict   String,
    rules     String
)
ENGINE = Join(ANY, LEFT, partition, seq, idx);

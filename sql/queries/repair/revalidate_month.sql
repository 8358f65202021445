-- revalidate_month: rewrites one month of views_raw ({partition:String},
-- its partition id, YYYYMM) with the changed verdicts. verdict is in
-- views_raw's sorting key, which a mutation may not update, so the month
-- is copied aside with the new verdicts and put in place of the old one in
-- one step (REPLACE PARTITION is atomic): readers see the month before or
-- after, never half of it. Nothing else writes views_raw meanwhile (the
-- revalidation holds every partition), so no insert is lost by the swap.
-- A rerun after a cut repeats it: rows already rewritten get the same
-- verdict again.
DROP TABLE IF EXISTS views_raw_revalidate SYNC;

CREATE TABLE views_raw_revalidate AS views_raw;

INSERT INTO views_raw_revalidate
SETTINGS insert_deduplicate = 0
SELECT * REPLACE (
    ifNull(joinGetOrNull('revalidate_changes', 'verdict', partition, seq, idx), toString(verdict)) AS verdict,
    ifNull(joinGetOrNull('revalidate_changes', 'rules', partition, seq, idx), toString(rules)) AS rules)
FROM views_raw
WHERE _partition_id = {partition:String};

ALTER TABLE views_raw REPLACE PARTITION ID {partition:String} FROM views_raw_revalidate
SETTINGS allow_replace_partition_from_empty_source = 1;

DROP TABLE IF EXISTS views_raw_revalidate SYNC;

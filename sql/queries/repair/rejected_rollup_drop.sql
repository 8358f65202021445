-- rejected_rollup_drop: last step of rebuilding rejected_rollup, once
-- every partition is swapped: the staging table goes.
DROP TABLE IF EXISTS rejected_rollup_rebuild SYNC

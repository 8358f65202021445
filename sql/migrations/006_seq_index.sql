-- A minmax index on seq, so the progress checks (queries/
-- partition_max_seq.sql, run at every partition start) read only the parts
-- written since a partition's progress record instead of the whole table.
-- Batches are inserted in stream order, so a part's seq range is narrow and
-- old parts fall below the bound. MATERIALIZE builds it for parts written
-- before this migration, in the background (a mutation reading the seq
-- column once); until then those parts are read as before.
ALTER TABLE views_raw ADD INDEX IF NOT EXISTS seq_minmax seq TYPE minmax GRANULARITY 1;

ALTER TABLE views_raw MATERIALIZE INDEX IF EXISTS seq_minmax;

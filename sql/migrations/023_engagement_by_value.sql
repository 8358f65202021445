-- engagement_rollup gains a projection sorted by value before time, for
-- the reads of one value or a few (a page's summary, its timeseries of an
-- engagement metric, the engagement columns of a page ranking). The table
-- is sorted (site, dim, grain, bucket, value), which suits the reads of
-- every value over a range (the entry and exit page rankings): there one
-- page's hours lie one row in every ~1,000 of its dimension, so reading
-- them decoded every granule of the range, histograms included (a page's
-- scroll-depth series over 30 days of 10M events read 1.2M rows for 1,420;
-- docs/benchmarks, "Stats API"). The engine reads the projection wherever
-- it marks fewer granules; the rows are the same, so every answer is.
--
-- An aggregating table refuses a projection unless a merge says what
-- becomes of it: 'rebuild' sorts the merged rows into it again ('drop'
-- would lose it at the first merge). MATERIALIZE builds it for the parts
-- written before this migration, in the background (a mutation); until
-- then those parts are read as before. An ALTER, not a rebuilt table: the
-- table keeps its deduplication window, which drops the repeat of a feed
-- a validator redoes at start (migration 022's note). The repair makes its
-- engagement_rollup_rebuild AS engagement_rollup, which copies the
-- projection and the setting, so REPLACE PARTITION still finds the two
-- tables alike.
ALTER TABLE engagement_rollup MODIFY SETTING deduplicate_merge_projection_mode = 'rebuild';

ALTER TABLE engagement_rollup
    ADD PROJECTION IF NOT EXISTS by_value (SELECT * ORDER BY site, dim, value, grain, bucket);

ALTER TABLE engagement_rollup MATERIALIZE PROJECTION IF EXISTS by_value;

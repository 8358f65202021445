-- feed_next_batch: a batch number above every one stored or fed → batch.
-- For writing rows outside a validator (tools, tests) so the feed takes
-- them.
SELECT greatest((SELECT max(batch) FROM views_raw), (SELECT max(last) FROM rollup_feed)) + 1

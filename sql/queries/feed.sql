-- feed: one partition's batches first..last of views_raw into views_feed,
-- whose materialized views fill the rollups (migration 012). Params
-- partition, first, last (batch numbers: the last stream sequence of the
-- insert that stored a row), since (Unix ms: no row of the range was
-- received before it; 0 when unknown) and token.
--
-- Exactly once: the token is derived from the range, which is recorded in
-- rollup_feed before this runs, so a feed redone after a crash is dropped
-- by the rollups' deduplication. That needs the redo to send the same
-- blocks: the rows in stream order, read by one thread, so the blocks and
-- each view's blocks from them come out the same however the parts of
-- views_raw were merged in between. The same rows in another order are
-- not enough, even as one block under the same token: a view's block is
-- recognised by its bytes too, and aggregate states built in another
-- order differ, so views that had the feed take it again
-- (TestFeedRedoneAfterMerge). A feed's unmerged parts are each a run of
-- stream order, which the sort concatenates; a part merged before its feed
-- costs a full sort (docs/benchmarks/history/issue-25.md, "The rollup path
-- with batches in stream order").
--
-- The columns are named: migration 019 added ua, asn and origin after the
-- others, 021 kind and the visit stage's delta.
--
-- preferred_block_size_bytes 1 GiB: the read hands the sort whole chunks
-- (up to max_block_size rows) instead of the few thousand rows of wide
-- rows that fit 1 MB, the default. On parts that each hold one insert
-- (what a busy partition's feed reads) the sort then concatenates runs
-- instead of merging thousands of small ones: end to end 9.3 against 11.7
-- µs of CPU a row (docs/benchmarks/history/issue-22.md, "The feed's
-- chunks"). The views still get one block per feed: the insert squashes
-- the sorted rows, whatever size the read cut them.
-- os_threads_nice_value_query and _materialized_view 10: the feed and its
-- views run at nice 10, as merges do (mergeNice, sql/store), so in `serve`
-- a feed's burst runs on the CPU the requests leave. The engine applies
-- them only with CAP_SYS_NICE (TestStoreWorkAtNice;
-- docs/benchmarks/history/issue-25.md, "The store's writes at nice 10").
INSERT INTO views_feed (time, site, page, visitor, verdict, utm_source, utm_medium, utm_campaign, country,
    ref_host, ref_source, browser, os, device, screen, ua, asn, origin,
    kind, visit_set, view_time, visit_start, entry_page, entry_ref_host, entry_ref_source,
    entry_utm_source, entry_utm_medium, entry_utm_campaign, prev_page,
    d_visits, d_bounces, d_visit_ms, d_engaged_ms, eng_from, eng_to, scroll_from, scroll_to)
SETTINGS insert_deduplication_token = {token:String}, insert_deduplicate = 1,
    deduplicate_blocks_in_dependent_materialized_views = 1, async_insert = 0,
    max_threads = 1, max_insert_threads = 1, preferred_block_size_bytes = 1073741824,
    os_threads_nice_value_query = 10, os_threads_nice_value_materialized_view = 10
SELECT time, site, page, visitor, verdict, utm_source, utm_medium, utm_campaign, country,
    ref_host, ref_source, browser, os, device, screen, ua, asn, origin,
    kind, visit_set, view_time, visit_start, entry_page, entry_ref_host, entry_ref_source,
    entry_utm_source, entry_utm_medium, entry_utm_campaign, prev_page,
    d_visits, d_bounces, d_visit_ms, d_engaged_ms, eng_from, eng_to, scroll_from, scroll_to
FROM views_raw
WHERE partition = {partition:UInt16}
  AND batch >= {first:UInt64} AND batch <= {last:UInt64}
  AND time >= fromUnixTimestamp64Milli({since:Int64}, 'UTC')
ORDER BY seq, idx

-- page_rollup_totals: the all-time rows of the rebuilt page_rollup (of
-- {site}'s pages, or every site's with ''), merged from its day rows once
-- they are all in the staging table: what the view's all-time rows hold,
-- since every view it counts lands in one day row and one all-time row.
INSERT INTO page_rollup_rebuild
SETTINGS insert_deduplicate = 0
SELECT 'total', site, page, toDateTime(0, 'UTC'), sum(views), uniqCombined64MergeState(uniques)
FROM page_rollup_rebuild
WHERE grain = 'day' AND ({site:String} = '' OR site = {site:String})
GROUP BY site, page

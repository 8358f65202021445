-- stats_page_exact: the exact number of distinct visitors of some pages
-- over a range (read as stats_breakdown reads it), from page_rollup.
-- page_rollup's sketches are uniqCombined64 at precision 17, which keeps
-- the exact set of id hashes until it holds 4096 ids; every sketch merged
-- here holds a subset of the page's visitors over the range, so for a page
-- with fewer than 4096 views there (api/stats asks for no other) no sketch
-- on the way ever reaches that size and the count is exact. Those sketches
-- are small sets, cheap to merge: a popular page's are 96 KiB
-- HyperLogLogs, which is why the ranking's large pages are read from
-- dim_rollup's (docs/benchmarks/history/issue-10-session-2.md, "Stats API
-- latency").
SELECT page, toUInt64(uniqCombined64Merge(uniques)) AS uniques
FROM page_rollup
WHERE site = {site:String} AND page IN {pages:Array(String)}
  AND ((grain = 'day' AND bucket >= {dfrom:DateTime('UTC')} AND bucket < {dto:DateTime('UTC')})
    OR (grain = 'hour' AND ((bucket >= {from:DateTime('UTC')} AND bucket < {dfrom:DateTime('UTC')})
                         OR (bucket >= {dto:DateTime('UTC')} AND bucket < {to:DateTime('UTC')}))))
GROUP BY page

-- tamper_rollup: one more view in a page's all-time rollup than views_raw
-- holds, as a lost or doubled rollup insert would leave it (test only).
INSERT INTO page_rollup
SELECT 'total', {site:String}, {page:String}, toDateTime(0, 'UTC'), toUInt64(1), uniqCombined64State(toUInt64(1))

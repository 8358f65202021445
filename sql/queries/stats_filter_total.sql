-- stats_filter_total: valid views and merged uniques of the values of one
-- dimension {dim} that pass a filter, over a range and the period before
-- it, one row per period (current = 1 for [from, to)), read as
-- stats_summary reads the site's (whole UTC days from the day grain, the
-- edges from hours). Each view has one value of a dimension, so the views
-- with a passing value are the union of those values' rows: views add,
-- sketches merge. The filter (api/stats, filter.go) is constant
-- parameters: f_on off passes every value; f_in the values a value must be
-- one of (when f_inon), f_out those it must not be, f_has the substrings
-- one of which it must hold (case-insensitive; empty = no such test),
-- f_hasnt those it must hold none of.
SELECT
    toUInt8(bucket >= {from:DateTime('UTC')}) AS current,
    toUInt64(sum(views)) AS views,
    toUInt64(uniqCombined64Merge(12)(uniques)) AS uniques
FROM dim_rollup
WHERE site = {site:String} AND dim = {dim:String} AND page = ''
  AND (NOT {f_on:Bool} OR ((NOT {f_inon:Bool} OR value IN {f_in:Array(String)})
      AND value NOT IN {f_out:Array(String)}
      AND (empty({f_has:Array(String)}) OR multiSearchAnyCaseInsensitiveUTF8(value, {f_has:Array(String)}))
      AND (empty({f_hasnt:Array(String)}) OR NOT multiSearchAnyCaseInsensitiveUTF8(value, {f_hasnt:Array(String)}))))
  AND ((grain = 'day' AND ((bucket >= {dfrom:DateTime('UTC')} AND bucket < {dto:DateTime('UTC')})
                        OR (bucket >= {pdfrom:DateTime('UTC')} AND bucket < {pdto:DateTime('UTC')})))
    OR (grain = 'hour' AND ((bucket >= {from:DateTime('UTC')} AND bucket < {dfrom:DateTime('UTC')})
                         OR (bucket >= {dto:DateTime('UTC')} AND bucket < {to:DateTime('UTC')})
                         OR (bucket >= {pfrom:DateTime('UTC')} AND bucket < {pdfrom:DateTime('UTC')})
                         OR (bucket >= {pdto:DateTime('UTC')} AND bucket < {pto:DateTime('UTC')}))))
GROUP BY current
ORDER BY current

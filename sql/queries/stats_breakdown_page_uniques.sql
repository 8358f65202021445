-- stats_breakdown_page_uniques: stats_breakdown_uniques for the site's
-- breakdown by page (page = ''), reading week pieces where they fit
-- (migration 013): the days of one ISO week within one month, dim
-- 'page_week', stored as day rows so they are ordered by value. A piece
-- wholly inside the range's days counts instead of its days; the days of
-- pieces cut by the range's ends count one by one, and the edge hours as
-- before. Over 30 days that is at most six pieces and a dozen days per
-- page instead of 30 days.
SELECT
    value,
    toUInt64(uniqCombined64Merge(12)(uniques)) AS uniques
FROM dim_rollup
WHERE site = {site:String} AND dim IN ('page', 'page_week') AND page = ''
  AND value IN {values:Array(String)}
  AND ((grain = 'day' AND if(grain = 'day', value, '') IN {values:Array(String)}
        AND bucket >= {dfrom:DateTime('UTC')} AND bucket < {dto:DateTime('UTC')}
        AND (dim = 'page_week') = (
            toDateTime(greatest(toMonday(bucket), toStartOfMonth(bucket)), 'UTC') >= {dfrom:DateTime('UTC')}
            AND toDateTime(least(toMonday(bucket) + 7, addMonths(toStartOfMonth(bucket), 1)), 'UTC') <= {dto:DateTime('UTC')}))
    OR (dim = 'page' AND grain = 'hour' AND ((bucket >= {from:DateTime('UTC')} AND bucket < {dfrom:DateTime('UTC')})
                         OR (bucket >= {dto:DateTime('UTC')} AND bucket < {to:DateTime('UTC')}))))
GROUP BY value

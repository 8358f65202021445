-- stats_filter_views: the valid views of [from, to) that pass filters on
-- several dimensions, from page_views (migration 011: each valid view with
-- its page and every dimension, kept as long as views_raw), grouped by
-- {column} (a dimension column; site for the views' total) and, unless
-- {step} is 'none', by bucket t (Unix seconds: 'minute', 'hour', or
-- 'day' in the site's zone tz). Uniques by a page's rule (api/stats,
-- exactBelow): a group with fewer than {exact} views is counted exactly
-- (uniqCombined64 at precision 17 is an exact set below 4096 ids), one
-- with more by uniqCombined64(12), dim_rollup's estimator. Sorted by
-- views, then value and t; one page of rows from offset, each with the
-- number of groups.
--
-- Each dimension has one filter slot of constant parameters (api/stats,
-- filter.go), the f_ parameters of stats_filter_total under the
-- dimension's name: <dim>_on off passes every view, so a dimension
-- without a filter costs nothing per row; <dim>_in the values it must be
-- one of (when <dim>_inon), <dim>_out those it must not be, <dim>_has the
-- substrings one of which it must hold (case-insensitive; empty = no such
-- test), <dim>_hasnt those it must hold none of. The tests are IN and
-- guarded by their emptiness: has() of a parameter array, and the
-- substring tests with no needle, ran per row and tripled a month's scan
-- of 10M events (docs/benchmarks, "Stats API with filters").
SELECT toString(value_) AS value, t, views, uniques, total_values
FROM
(
    SELECT
        {column:Identifier} AS value_,
        multiIf({step:String} = 'minute', toUnixTimestamp(toStartOfMinute(time)),
                {step:String} = 'hour', toUnixTimestamp(toStartOfHour(time)),
                {step:String} = 'day', toUnixTimestamp(toDateTime(toStartOfDay(time, {tz:String}))),
                0) AS t,
        count() AS views,
        toUInt64(if(views < {exact:UInt64}, uniqCombined64(visitor), uniqCombined64(12)(visitor))) AS uniques,
        toUInt64(count() OVER ()) AS total_values
    FROM page_views
    WHERE site = {site:String}
      AND time >= {from:DateTime('UTC')} AND time < {to:DateTime('UTC')}
      AND (NOT {page_on:Bool} OR ((NOT {page_inon:Bool} OR page IN {page_in:Array(String)})
          AND page NOT IN {page_out:Array(String)}
          AND (empty({page_has:Array(String)}) OR multiSearchAnyCaseInsensitiveUTF8(page, {page_has:Array(String)}))
          AND (empty({page_hasnt:Array(String)}) OR NOT multiSearchAnyCaseInsensitiveUTF8(page, {page_hasnt:Array(String)}))))
      AND (NOT {source_on:Bool} OR ((NOT {source_inon:Bool} OR ref_source IN {source_in:Array(String)})
          AND ref_source NOT IN {source_out:Array(String)}
          AND (empty({source_has:Array(String)}) OR multiSearchAnyCaseInsensitiveUTF8(ref_source, {source_has:Array(String)}))
          AND (empty({source_hasnt:Array(String)}) OR NOT multiSearchAnyCaseInsensitiveUTF8(ref_source, {source_hasnt:Array(String)}))))
      AND (NOT {referrer_on:Bool} OR ((NOT {referrer_inon:Bool} OR ref_host IN {referrer_in:Array(String)})
          AND ref_host NOT IN {referrer_out:Array(String)}
          AND (empty({referrer_has:Array(String)}) OR multiSearchAnyCaseInsensitiveUTF8(ref_host, {referrer_has:Array(String)}))
          AND (empty({referrer_hasnt:Array(String)}) OR NOT multiSearchAnyCaseInsensitiveUTF8(ref_host, {referrer_hasnt:Array(String)}))))
      AND (NOT {utm_source_on:Bool} OR ((NOT {utm_source_inon:Bool} OR utm_source IN {utm_source_in:Array(String)})
          AND utm_source NOT IN {utm_source_out:Array(String)}
          AND (empty({utm_source_has:Array(String)}) OR multiSearchAnyCaseInsensitiveUTF8(utm_source, {utm_source_has:Array(String)}))
          AND (empty({utm_source_hasnt:Array(String)}) OR NOT multiSearchAnyCaseInsensitiveUTF8(utm_source, {utm_source_hasnt:Array(String)}))))
      AND (NOT {utm_medium_on:Bool} OR ((NOT {utm_medium_inon:Bool} OR utm_medium IN {utm_medium_in:Array(String)})
          AND utm_medium NOT IN {utm_medium_out:Array(String)}
          AND (empty({utm_medium_has:Array(String)}) OR multiSearchAnyCaseInsensitiveUTF8(utm_medium, {utm_medium_has:Array(String)}))
          AND (empty({utm_medium_hasnt:Array(String)}) OR NOT multiSearchAnyCaseInsensitiveUTF8(utm_medium, {utm_medium_hasnt:Array(String)}))))
      AND (NOT {utm_campaign_on:Bool} OR ((NOT {utm_campaign_inon:Bool} OR utm_campaign IN {utm_campaign_in:Array(String)})
          AND utm_campaign NOT IN {utm_campaign_out:Array(String)}
          AND (empty({utm_campaign_has:Array(String)}) OR multiSearchAnyCaseInsensitiveUTF8(utm_campaign, {utm_campaign_has:Array(String)}))
          AND (empty({utm_campaign_hasnt:Array(String)}) OR NOT multiSearchAnyCaseInsensitiveUTF8(utm_campaign, {utm_campaign_hasnt:Array(String)}))))
      AND (NOT {browser_on:Bool} OR ((NOT {browser_inon:Bool} OR browser IN {browser_in:Array(String)})
          AND browser NOT IN {browser_out:Array(String)}
          AND (empty({browser_has:Array(String)}) OR multiSearchAnyCaseInsensitiveUTF8(browser, {browser_has:Array(String)}))
          AND (empty({browser_hasnt:Array(String)}) OR NOT multiSearchAnyCaseInsensitiveUTF8(browser, {browser_hasnt:Array(String)}))))
      AND (NOT {os_on:Bool} OR ((NOT {os_inon:Bool} OR os IN {os_in:Array(String)})
          AND os NOT IN {os_out:Array(String)}
          AND (empty({os_has:Array(String)}) OR multiSearchAnyCaseInsensitiveUTF8(os, {os_has:Array(String)}))
          AND (empty({os_hasnt:Array(String)}) OR NOT multiSearchAnyCaseInsensitiveUTF8(os, {os_hasnt:Array(String)}))))
      AND (NOT {device_on:Bool} OR ((NOT {device_inon:Bool} OR device IN {device_in:Array(String)})
          AND device NOT IN {device_out:Array(String)}
          AND (empty({device_has:Array(String)}) OR multiSearchAnyCaseInsensitiveUTF8(device, {device_has:Array(String)}))
          AND (empty({device_hasnt:Array(String)}) OR NOT multiSearchAnyCaseInsensitiveUTF8(device, {device_hasnt:Array(String)}))))
      AND (NOT {country_on:Bool} OR ((NOT {country_inon:Bool} OR country IN {country_in:Array(String)})
          AND country NOT IN {country_out:Array(String)}
          AND (empty({country_has:Array(String)}) OR multiSearchAnyCaseInsensitiveUTF8(country, {country_has:Array(String)}))
          AND (empty({country_hasnt:Array(String)}) OR NOT multiSearchAnyCaseInsensitiveUTF8(country, {country_hasnt:Array(String)}))))
      AND (NOT {screen_on:Bool} OR ((NOT {screen_inon:Bool} OR screen IN {screen_in:Array(String)})
          AND screen NOT IN {screen_out:Array(String)}
          AND (empty({screen_has:Array(String)}) OR multiSearchAnyCaseInsensitiveUTF8(screen, {screen_has:Array(String)}))
          AND (empty({screen_hasnt:Array(String)}) OR NOT multiSearchAnyCaseInsensitiveUTF8(screen, {screen_hasnt:Array(String)}))))
    GROUP BY value_, t
)
ORDER BY views DESC, value, t
LIMIT {limit:UInt32} OFFSET {offset:UInt32}

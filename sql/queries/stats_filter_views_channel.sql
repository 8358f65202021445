-- stats_filter_views_channel: stats_filter_views with the views' channel
-- (docs/stats-api.md, "Channels") as one more dimension to group by
-- ({column} channel) and filter (the channel_ slot). The channel is
-- computed per view from its source's kind ({kind_names} to {kind_of}: the
-- referrer-sources list's sections, validate/judge.SourceKinds), its UTM
-- medium and source, and its referrer, first rule that holds:
--   paid medium (cpc, ppc, paid…, cpm, cpv, cpa, display, banner,
--     retargeting): Paid Search from a search engine, Paid Social from a
--     social network, else Paid Other;
--   an e-mail medium or source (email, e-mail, newsletter…) or a webmail
--     referrer: Email;
--   a search engine, or medium organic: Organic Search;
--   a social network, or medium social: Organic Social;
--   an AI assistant: AI Assistants;
--   any other referrer: Referral;
--   no referrer and no UTM tag: Direct; else Other.
-- A twin of stats_filter_views (TestFilterViewsTwins: the same text
-- besides the channel), kept apart so that every other read does not
-- compute the channel of every view it scans. The channel is a code (an
-- Enum8) and its inputs are read as stored (LowCardinality): a string a
-- view, and functions of every view's medium rather than of its few
-- distinct ones, took counting a month of 10M events by channel from 371
-- to 614 ms (docs/benchmarks/history/issue-23.md, "Channels").
SELECT toString(value_) AS value, t, views, uniques, total_values
FROM
(
    WITH
        lower(utm_medium) AS medium_,
        transform(ref_source, {kind_names:Array(String)}, {kind_of:Array(String)}, '') AS kind_,
        match(medium_, '^(cpc|ppc|paid.*|cpm|cpv|cpa|display|banner|retargeting)$') AS paid_,
        CAST(multiIf(paid_ AND kind_ = 'search', 1, paid_ AND kind_ = 'social', 2, paid_, 3,
                     match(medium_, '^(e-?mail|newsletter)') OR match(lower(utm_source), 'e-?mail|newsletter') OR kind_ = 'email', 4,
                     kind_ = 'search' OR medium_ = 'organic', 5,
                     kind_ = 'social' OR medium_ = 'social', 6,
                     kind_ = 'ai', 7,
                     ref_host != '', 8,
                     medium_ = '' AND utm_source = '' AND utm_campaign = '', 9,
                     10),
             'Enum8(''Paid Search'' = 1, ''Paid Social'' = 2, ''Paid Other'' = 3, ''Email'' = 4, ''Organic Search'' = 5, ''Organic Social'' = 6, ''AI Assistants'' = 7, ''Referral'' = 8, ''Direct'' = 9, ''Other'' = 10)') AS channel
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
      AND (NOT {channel_on:Bool} OR ((NOT {channel_inon:Bool} OR toString(channel) IN {channel_in:Array(String)})
          AND toString(channel) NOT IN {channel_out:Array(String)}
          AND (empty({channel_has:Array(String)}) OR multiSearchAnyCaseInsensitiveUTF8(toString(channel), {channel_has:Array(String)}))
          AND (empty({channel_hasnt:Array(String)}) OR NOT multiSearchAnyCaseInsensitiveUTF8(toString(channel), {channel_hasnt:Array(String)}))))
    GROUP BY value_, t
)
ORDER BY views DESC, value, t
LIMIT {limit:UInt32} OFFSET {offset:UInt32}

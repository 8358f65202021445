-- explain_event: the stored events of a site with one event id (a retry
-- is stored again, as duplicate_id), each with every field the rules read
-- (the columns of revalidate_events), its verdict, the rule set that gave
-- it and its partition, oldest first.
SELECT seq, idx, toUnixTimestamp64Milli(time), site, page, referrer, ua, event_id, visitor, network,
    toUInt8(webdriver), toUInt8(datacenter), toString(source),
    toUInt8(hints_present), screen_w, screen_h, languages, toUInt8(tz), toUInt8(ua_data), toUInt8(secure_context),
    toUInt8(window_reported), window_w, window_h,
    utm_source, utm_medium, utm_campaign, country, req_flags, asn, origin,
    kind, engaged_ms, scroll, age_ms,
    toString(verdict), rules, partition
FROM views_raw
WHERE site = {site:String} AND event_id = {id:String}
ORDER BY time, seq, idx
LIMIT 10

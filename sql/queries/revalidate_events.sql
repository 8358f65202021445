-- revalidate_events: one partition's events between two times, in stream
-- order, as a revalidation judges them again when the stream no longer
-- holds them: every field the rules read, as ingest recorded it. Read
-- {limit} rows at a time after stream sequence {after}; the caller drops
-- a last message cut by the limit and starts the next read before it.
SELECT seq, idx, toUnixTimestamp64Milli(time), site, page, referrer, ua, event_id, visitor, network,
    toUInt8(webdriver), toUInt8(datacenter), toString(source),
    toUInt8(hints_present), screen_w, screen_h, languages, toUInt8(tz), toUInt8(ua_data), toUInt8(secure_context),
    toUInt8(window_reported), window_w, window_h,
    utm_source, utm_medium, utm_campaign, country, req_flags, asn, origin,
    kind, engaged_ms, scroll, age_ms
FROM views_raw
WHERE partition = {partition:UInt16}
  AND time >= fromUnixTimestamp64Milli({from:Int64}, 'UTC')
  AND time <= fromUnixTimestamp64Milli({to:Int64}, 'UTC')
  AND seq > {after:UInt64}
ORDER BY seq, idx
LIMIT {limit:UInt32}

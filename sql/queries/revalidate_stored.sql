-- revalidate_stored: what views_raw holds for one site's events of one
-- partition between two times: the verdict, the rule set that judged it,
-- and what the visit stage decided (migration 021), with the hints a
-- report borrowed from its view. A revalidation compares its own with
-- these, and feeds the visit stage the stored verdicts of the views
-- outside its range.
SELECT seq, idx, toUnixTimestamp64Milli(time) AS t, kind, verdict, page, rules,
    toUInt8(visit_set) AS visit_set, toUnixTimestamp64Milli(view_time) AS view_ms,
    toUnixTimestamp64Milli(visit_start) AS start_ms, entry_page, entry_ref_host,
    toString(entry_ref_source) AS entry_ref_source, toString(entry_utm_source) AS entry_utm_source,
    toString(entry_utm_medium) AS entry_utm_medium, entry_utm_campaign, prev_page,
    d_visits, d_bounces, d_visit_ms, d_engaged_ms, eng_from, eng_to, scroll_from, scroll_to,
    toUInt8(hints_present) AS hints_present, screen_w, screen_h, toString(screen) AS screen
FROM views_raw
WHERE site = {site:String} AND partition = {partition:UInt16}
  AND time >= fromUnixTimestamp64Milli({from:Int64}, 'UTC')
  AND time < fromUnixTimestamp64Milli({to:Int64}, 'UTC')

-- revalidate_month: rewrites one month of views_raw ({partition:String},
-- its partition id, YYYYMM) with the changed rows: their verdicts, rule
-- sets and visit columns (revalidate_prepare). verdict is in
-- views_raw's sorting key, which a mutation may not update, so the month
-- is copied aside with the new verdicts and put in place of the old one in
-- one step (REPLACE PARTITION is atomic): readers see the month before or
-- after, never half of it. Nothing else writes views_raw meanwhile (the
-- revalidation holds every partition), so no insert is lost by the swap.
-- A rerun after a cut repeats it: rows already rewritten get the same
-- verdict again. One lookup a row says whether it changed; the other
-- columns are looked up for the changed rows only (short-circuit
-- evaluation of if), which are few next to the rows copied.
DROP TABLE IF EXISTS views_raw_revalidate SYNC;

CREATE TABLE views_raw_revalidate AS views_raw;

INSERT INTO views_raw_revalidate
SETTINGS insert_deduplicate = 0, short_circuit_function_evaluation = 'force_enable'
WITH joinGetOrNull('revalidate_changes', 'verdict', partition, seq, idx) AS changed
SELECT * REPLACE (
    ifNull(changed, toString(verdict)) AS verdict,
    if(changed IS NULL, toString(rules), joinGet('revalidate_changes', 'rules', partition, seq, idx)) AS rules,
    if(changed IS NULL, visit_set, joinGet('revalidate_changes', 'visit_set', partition, seq, idx) = 1) AS visit_set,
    if(changed IS NULL, view_time, fromUnixTimestamp64Milli(joinGet('revalidate_changes', 'view_ms', partition, seq, idx), 'UTC')) AS view_time,
    if(changed IS NULL, visit_start, fromUnixTimestamp64Milli(joinGet('revalidate_changes', 'start_ms', partition, seq, idx), 'UTC')) AS visit_start,
    if(changed IS NULL, toString(entry_page), joinGet('revalidate_changes', 'entry_page', partition, seq, idx)) AS entry_page,
    if(changed IS NULL, toString(entry_ref_host), joinGet('revalidate_changes', 'entry_ref_host', partition, seq, idx)) AS entry_ref_host,
    if(changed IS NULL, toString(entry_ref_source), joinGet('revalidate_changes', 'entry_ref_source', partition, seq, idx)) AS entry_ref_source,
    if(changed IS NULL, toString(entry_utm_source), joinGet('revalidate_changes', 'entry_utm_source', partition, seq, idx)) AS entry_utm_source,
    if(changed IS NULL, toString(entry_utm_medium), joinGet('revalidate_changes', 'entry_utm_medium', partition, seq, idx)) AS entry_utm_medium,
    if(changed IS NULL, toString(entry_utm_campaign), joinGet('revalidate_changes', 'entry_utm_campaign', partition, seq, idx)) AS entry_utm_campaign,
    if(changed IS NULL, toString(prev_page), joinGet('revalidate_changes', 'prev_page', partition, seq, idx)) AS prev_page,
    if(changed IS NULL, d_visits, joinGet('revalidate_changes', 'd_visits', partition, seq, idx)) AS d_visits,
    if(changed IS NULL, d_bounces, joinGet('revalidate_changes', 'd_bounces', partition, seq, idx)) AS d_bounces,
    if(changed IS NULL, d_visit_ms, joinGet('revalidate_changes', 'd_visit_ms', partition, seq, idx)) AS d_visit_ms,
    if(changed IS NULL, d_engaged_ms, joinGet('revalidate_changes', 'd_engaged_ms', partition, seq, idx)) AS d_engaged_ms,
    if(changed IS NULL, eng_from, joinGet('revalidate_changes', 'eng_from', partition, seq, idx)) AS eng_from,
    if(changed IS NULL, eng_to, joinGet('revalidate_changes', 'eng_to', partition, seq, idx)) AS eng_to,
    if(changed IS NULL, scroll_from, joinGet('revalidate_changes', 'scroll_from', partition, seq, idx)) AS scroll_from,
    if(changed IS NULL, scroll_to, joinGet('revalidate_changes', 'scroll_to', partition, seq, idx)) AS scroll_to,
    if(changed IS NULL, hints_present, ifNull(joinGet('revalidate_changes', 'hints_present', partition, seq, idx) = 1, hints_present)) AS hints_present,
    if(changed IS NULL, screen_w, ifNull(joinGet('revalidate_changes', 'screen_w', partition, seq, idx), screen_w)) AS screen_w,
    if(changed IS NULL, screen_h, ifNull(joinGet('revalidate_changes', 'screen_h', partition, seq, idx), screen_h)) AS screen_h,
    if(changed IS NULL, toString(screen), ifNull(joinGet('revalidate_changes', 'screen', partition, seq, idx), toString(screen))) AS screen)
FROM views_raw
WHERE _partition_id = {partition:String};

ALTER TABLE views_raw REPLACE PARTITION ID {partition:String} FROM views_raw_revalidate
SETTINGS allow_replace_partition_from_empty_source = 1;

DROP TABLE IF EXISTS views_raw_revalidate SYNC;

-- revalidate_add: a chunk of changed rows as TSV ({rows:String}), in
-- revalidate_changes' column order (revalidate_prepare).
INSERT INTO revalidate_changes
SELECT *
FROM format(TSV, 'partition UInt16, seq UInt64, idx UInt32, verdict String, rules String, visit_set UInt8, view_ms Int64, start_ms Int64, entry_page String, entry_ref_host String, entry_ref_source String, entry_utm_source String, entry_utm_medium String, entry_utm_campaign String, prev_page String, d_visits Int8, d_bounces Int8, d_visit_ms Int32, d_engaged_ms Int32, eng_from Int8, eng_to Int8, scroll_from Int8, scroll_to Int8, hints_present Nullable(UInt8), screen_w Nullable(UInt16), screen_h Nullable(UInt16), screen Nullable(String)', {rows:String})

-- revalidate_month_changes: how many of a views_raw month's rows
-- ({partition:String}, its partition id) have a changed verdict in
-- revalidate_changes; months without one are not rewritten.
SELECT count()
FROM views_raw
WHERE _partition_id = {partition:String}
  AND joinGetOrNull('revalidate_changes', 'verdict', partition, seq, idx) IS NOT NULL

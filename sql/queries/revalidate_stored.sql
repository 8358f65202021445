-- revalidate_stored: the verdicts views_raw holds for one site's events of
-- one partition in a range, with the rule set that judged them, which a
-- revalidation compares with its own.
SELECT seq, idx, verdict, page, rules
FROM views_raw
WHERE site = {site:String} AND partition = {partition:UInt16}
  AND time >= fromUnixTimestamp64Milli({from:Int64}, 'UTC')
  AND time < fromUnixTimestamp64Milli({to:Int64}, 'UTC')

-- revalidate_page_valid: each page's valid views (kind 0) of one site in a range,
-- as views_raw holds them: a revalidation's "before" per page.
SELECT page, count()
FROM views_raw
WHERE site = {site:String} AND verdict = 'valid' AND kind = 0
  AND time >= fromUnixTimestamp64Milli({from:Int64}, 'UTC')
  AND time < fromUnixTimestamp64Milli({to:Int64}, 'UTC')
GROUP BY page

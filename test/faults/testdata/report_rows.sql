-- report_rows: every engagement report stored for a site, with its
-- verdict.
SELECT event_id, engaged_ms, verdict
FROM views_raw
WHERE site = {site:String} AND kind = 1

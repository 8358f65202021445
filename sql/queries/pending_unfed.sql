-- pending_unfed: valid views (kind 0: no engagement report) stored in views_raw that no feed has taken to
-- the rollups yet, per site and page, and the receive time (Unix ms) of
-- the oldest of them: part of a public count's `pending`, and of how far
-- a site's counting is behind. {since} bounds the scan to recent parts:
-- rows after a partition's last feed were received after that feed's
-- oldest row, less the settle window (a held view is stored late under
-- its own time).
SELECT site, page, count(), toUnixTimestamp64Milli(min(time))
FROM views_raw
WHERE time >= fromUnixTimestamp64Milli({since:Int64}, 'UTC')
  AND verdict = 'valid' AND kind = 0
  AND batch > {fed:Map(UInt16, UInt64)}[partition]
GROUP BY site, page

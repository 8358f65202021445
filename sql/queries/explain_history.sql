-- explain_history: what views_raw holds of the views before one event
-- (at {at} ms, stream position {partition}/{seq}/{idx}) that the rules
-- depending on earlier views read: only views that reached those rules
-- count (a view the stateless rules rejected leaves no state behind), and
-- only on the event's site; an engagement report (kind 1) is no view.
-- Windows in ms: {w_retry}, {w_rate}, {w_rotation}, {w_dup}. → earlier events with its id, the visitor's and the network's
-- views in the rate window, the network's distinct user agents in the
-- rotation window, the visitor's earlier views of the page in the
-- duplicate window and the last one's time (ms, 0 if none).
WITH
    fromUnixTimestamp64Milli({at:Int64}, 'UTC') AS at,
    (time < at OR time = at AND partition = {partition:UInt16} AND (seq < {seq:UInt64} OR seq = {seq:UInt64} AND idx < {idx:UInt32})) AS before,
    verdict IN ('valid', 'rate', 'network_rotation', 'duplicate') AS stateful
SELECT
    countIf(before AND (stateful OR verdict = 'duplicate_id') AND event_id = {id:String} AND time >= at - toIntervalMillisecond({w_retry:Int64})) AS earlier_same_id,
    countIf(before AND stateful AND visitor = {visitor:UInt64} AND time > at - toIntervalMillisecond({w_rate:Int64})) AS visitor_views,
    countIf(before AND stateful AND network = {network:UInt64} AND time > at - toIntervalMillisecond({w_rate:Int64})) AS network_views,
    uniqExactIf(ua, before AND stateful AND network = {network:UInt64} AND time > at - toIntervalMillisecond({w_rotation:Int64})) AS network_uas,
    countIf(before AND stateful AND visitor = {visitor:UInt64} AND page = {page:String} AND time >= at - toIntervalMillisecond({w_dup:Int64})) AS earlier_page,
    toUnixTimestamp64Milli(maxIf(time, before AND stateful AND visitor = {visitor:UInt64} AND page = {page:String} AND time >= at - toIntervalMillisecond({w_dup:Int64}))) AS last_page_view_ms
FROM views_raw
WHERE site = {site:String}
  AND kind = 0
  AND time >= at - toIntervalMillisecond(greatest({w_retry:Int64}, {w_rate:Int64}, {w_rotation:Int64}, {w_dup:Int64}))
  AND time <= at

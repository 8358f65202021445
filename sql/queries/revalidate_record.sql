-- revalidate_record: one step of a revalidation, for its audit trail
-- (migration 016). VALUES with parameters would read stdin on chDB, so
-- the row is a SELECT.
INSERT INTO revalidations (id, state, site, range_from, range_to, rules, who, judged, changed)
SELECT {id:String}, {state:String}, {site:String},
    fromUnixTimestamp64Milli({from:Int64}, 'UTC'), fromUnixTimestamp64Milli({to:Int64}, 'UTC'),
    {rules:String}, {who:String}, {judged:UInt64}, {changed:UInt64}

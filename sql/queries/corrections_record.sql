-- corrections_record: one row of the corrections' audit trail (migration
-- 017): an add, or an undo repeating the correction it undoes.
INSERT INTO corrections (id, action, who, why, site, kind, value, range_from, range_to)
SELECT {id:String}, {action:String}, {who:String}, {why:String}, {site:String}, {kind:String}, {value:String},
    fromUnixTimestamp64Milli({from:Int64}, 'UTC'), fromUnixTimestamp64Milli({to:Int64}, 'UTC')

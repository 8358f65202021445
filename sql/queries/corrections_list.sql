-- corrections_list: every correction, newest first, with its state: in
-- force ('active') until an undo row names it ('undone'), and who added and
-- undid it, when and why. Times as Unix ms.
SELECT
    id,
    if(countIf(action = 'undo') > 0, 'undone', 'active') AS state,
    anyIf(site, action = 'add') AS site,
    anyIf(kind, action = 'add') AS kind,
    anyIf(value, action = 'add') AS value,
    toUnixTimestamp64Milli(anyIf(range_from, action = 'add')) AS range_from,
    toUnixTimestamp64Milli(anyIf(range_to, action = 'add')) AS range_to,
    toUnixTimestamp64Milli(minIf(at, action = 'add')) AS added_at,
    anyIf(who, action = 'add') AS added_by,
    anyIf(why, action = 'add') AS added_why,
    toUnixTimestamp64Milli(minIf(at, action = 'undo')) AS undone_at,
    anyIf(who, action = 'undo') AS undone_by,
    anyIf(why, action = 'undo') AS undone_why
FROM corrections
GROUP BY id
HAVING countIf(action = 'add') > 0
ORDER BY added_at DESC, id

-- drop_detached_part: deletes one detached part's files for good. Run by
-- `viewcount repair rollups` only once the table was rebuilt without it.
ALTER TABLE {table:Identifier} DROP DETACHED PART {part:String} SETTINGS allow_drop_detached = 1

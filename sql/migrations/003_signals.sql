-- The signals invalid-traffic rules judge besides the user agent, kept on
-- every row so an audit can see why an event was rejected (or not):
-- whether the client IP was in a datacenter range (decided in ingest, the
-- IP itself is never stored), and the browser hints the beacon reported.
-- Pixel hits have no hints: hints_present = false.
ALTER TABLE views_raw
    ADD COLUMN IF NOT EXISTS datacenter     Bool   DEFAULT false AFTER webdriver,
    ADD COLUMN IF NOT EXISTS hints_present  Bool   DEFAULT false AFTER datacenter,
    ADD COLUMN IF NOT EXISTS screen_w       UInt16 DEFAULT 0 AFTER hints_present,
    ADD COLUMN IF NOT EXISTS screen_h       UInt16 DEFAULT 0 AFTER screen_w,
    ADD COLUMN IF NOT EXISTS languages      UInt8  DEFAULT 0 AFTER screen_h,
    ADD COLUMN IF NOT EXISTS tz             Bool   DEFAULT false AFTER languages,
    ADD COLUMN IF NOT EXISTS ua_data        Bool   DEFAULT false AFTER tz,
    ADD COLUMN IF NOT EXISTS secure_context Bool   DEFAULT false AFTER ua_data;

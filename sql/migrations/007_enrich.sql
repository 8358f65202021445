-- The dimensions a creator's dashboard breaks views down by, kept on every
-- row of views_raw. Ingest fills the UTM tags (from the page
-- URL's query, before it is normalised away) and the country (ISO code
-- only, from a trusted CDN header or the country database, looked up
-- before the IP is dropped); the validator derives the referrer's host and
-- grouped source, browser, OS, device class and screen class, once per
-- distinct user agent or referrer.
--
-- ADD COLUMN with a constant DEFAULT rewrites nothing: rows written before
-- this migration read '' (unknown) for every new column.
ALTER TABLE views_raw
    ADD COLUMN IF NOT EXISTS utm_source   LowCardinality(String) DEFAULT '',
    ADD COLUMN IF NOT EXISTS utm_medium   LowCardinality(String) DEFAULT '',
    ADD COLUMN IF NOT EXISTS utm_campaign String DEFAULT '',
    ADD COLUMN IF NOT EXISTS country      LowCardinality(String) DEFAULT '',
    ADD COLUMN IF NOT EXISTS ref_host     String DEFAULT '',
    ADD COLUMN IF NOT EXISTS ref_source   LowCardinality(String) DEFAULT '',
    ADD COLUMN IF NOT EXISTS browser      LowCardinality(String) DEFAULT '',
    ADD COLUMN IF NOT EXISTS os           LowCardinality(String) DEFAULT '',
    ADD COLUMN IF NOT EXISTS device       LowCardinality(String) DEFAULT '',
    ADD COLUMN IF NOT EXISTS screen       LowCardinality(String) DEFAULT '';

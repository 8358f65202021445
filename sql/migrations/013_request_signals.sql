-- The request-consistency flags and the autonomous system of each view
-- (docs/invalid-traffic.md). Ingest decides both before the request is dropped: req_flags
-- is the event's HeaderFlags (bit 0: ingest looked at the headers; then
-- Sec-Fetch-* present / fitting the endpoint, Accept, Accept-Language,
-- Sec-CH-UA present / agreeing with the user agent / naming a headless
-- brand, secure context), asn the client network's AS number from the ASN
-- database (an operator, not a person). An operator can ask which provider
-- sent the datacenter views, or which flags the header_mismatch views
-- lacked.
--
-- ADD COLUMN with a constant DEFAULT rewrites nothing: rows written before
-- this migration read 0 (not examined / unknown).
ALTER TABLE views_raw
    ADD COLUMN IF NOT EXISTS req_flags UInt16 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS asn       UInt32 DEFAULT 0;

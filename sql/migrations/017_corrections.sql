-- Operators' corrections (docs/fixing-the-past.md): a site's views from a network or AS,
-- from a referrer host, or of a page path, excluded for a time range
-- (verdict 'excluded'). Append-only, so it is the audit trail too: one row
-- when a correction is added and one when it is undone, each with who,
-- when and why. A correction is in force while it has an 'add' row and no
-- 'undo' row; validators load those at each partition's start, and a
-- revalidation over its range applies an add or an undo to the past.
CREATE TABLE IF NOT EXISTS corrections
(
    id         String,
    at         DateTime64(3, 'UTC') DEFAULT now64(3),
    action     LowCardinality(String),  -- add | undo
    who        String,
    why        String,
    site       String,
    kind       LowCardinality(String),  -- asn | network | referrer | path
    value      String,
    range_from DateTime64(3, 'UTC'),
    range_to   DateTime64(3, 'UTC')
)
ENGINE = MergeTree
ORDER BY (id, at)
SETTINGS non_replicated_deduplication_window = 100;

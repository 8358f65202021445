-- views_raw: every event the validators judged, valid or not, with its
-- verdict. Rejected events are kept here (never dropped) so filtering is
-- auditable and can be re-run; the rollups count only verdict = 'valid'.
--
-- ORDER BY (site, verdict, time): almost every read names one site, and most
-- name a verdict too (the rollup views read 'valid'; audits read the
-- rejections of one reason). verdict has a handful of values, so putting it
-- before time costs a time-range-only query at most one index range per
-- verdict value, while an audit of one reason or of valid traffic reads only
-- its own granules; ordering low-cardinality columns first also makes the
-- long string columns compress better.
--
-- non_replicated_deduplication_window makes this non-replicated table keep
-- the hashes of its last inserts, so an insert retried with the same
-- insert_deduplication_token (rollup derives it from the batch's stream
-- sequence range) is dropped instead of counted twice.
CREATE TABLE IF NOT EXISTS views_raw
(
    time      DateTime64(3, 'UTC') CODEC(Delta, ZSTD),
    site      LowCardinality(String),
    page      String,
    referrer  String,
    ua        String,
    event_id  String,
    visitor   UInt64,
    network   UInt64,
    webdriver Bool,
    source    LowCardinality(String), -- 'pixel' or 'beacon'
    verdict   LowCardinality(String), -- 'valid' or a reason code (see Reason in event.go)
    partition UInt16,                 -- JetStream partition the event arrived on
    seq       UInt64,                 -- stream sequence of its message
    idx       UInt32                  -- position within that message
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(time)
ORDER BY (site, verdict, time)
SETTINGS non_replicated_deduplication_window = 10000;

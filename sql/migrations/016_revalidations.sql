-- The audit trail of revalidations (`viewcount revalidate`):
-- one row per step of each run, so an operator can see which ranges were
-- judged again, with which rule set, by whom, what changed, and whether a
-- run finished ('done') or was cut short (its last row 'started' or
-- 'verdicts': a rerun of the same range completes it). Small, kept for ever.
CREATE TABLE IF NOT EXISTS revalidations
(
    id        String,                  -- the run (random)
    at        DateTime64(3, 'UTC') DEFAULT now64(3),
    state     LowCardinality(String),  -- started | verdicts | done
    site      String,
    range_from DateTime64(3, 'UTC'),
    range_to   DateTime64(3, 'UTC'),
    rules     String,                  -- the rule-set version that judged
    who       String,                  -- what the caller gave (admin API: its note)
    judged    UInt64,                  -- the site's events in the range judged again
    changed   UInt64                   -- of them, verdicts that changed
)
ENGINE = MergeTree
ORDER BY (site, at)
SETTINGS non_replicated_deduplication_window = 100;

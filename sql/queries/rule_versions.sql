-- rule_versions: the events each rule set judged (views_raw.rules,
-- migration 014) → rules, events, valid, first, last (RFC 3339 UTC). ''
-- is every row stored before rule sets were recorded. A read of one
-- LowCardinality column and the time: all of views_raw, for an admin.
SELECT rules, count() AS events, countIf(verdict = 'valid') AS valid,
    formatDateTime(min(time), '%Y-%m-%dT%H:%i:%SZ', 'UTC') AS first,
    formatDateTime(max(time), '%Y-%m-%dT%H:%i:%SZ', 'UTC') AS last
FROM views_raw
GROUP BY rules
ORDER BY min(time)

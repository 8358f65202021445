-- verdicts: every event's verdict in stream order, to compare a re-run of
-- validation with the original (or two runs with each other).
SELECT
    partition,
    seq,
    idx,
    event_id,
    verdict
FROM views_raw
ORDER BY partition, seq, idx

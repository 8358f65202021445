-- The version of the rule set that judged each verdict (every verdict
-- records the version that produced it): a hash of the
-- validator's settings, built-in lists and rule libraries
-- (validate.RuleSet), whose settings GET /v1/admin/rules shows. With it a
-- count can say which rules judged it, and a revalidation knows which
-- rows an older rule set judged. Rows stored before read '' (unknown).
ALTER TABLE views_raw
    ADD COLUMN IF NOT EXISTS rules LowCardinality(String) DEFAULT '';

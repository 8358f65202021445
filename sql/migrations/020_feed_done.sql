-- rollup_feed.done: a feed's range recorded again once its copy into the
-- rollups has returned. The record before the copy bounds what the
-- rollups can hold (nothing of a later batch); this one says what they
-- hold for certain, so a reader's own view is known to be in a count read
-- after it (api/own.go) rather than only known to be absent from one read
-- before it. Rows recorded before this migration read 0: their feeds are
-- not known to have completed, which errs on the side of a count one
-- short, never one over.
ALTER TABLE rollup_feed
    ADD COLUMN IF NOT EXISTS done UInt8 DEFAULT 0;

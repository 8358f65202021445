-- revalidate_prepare: the table of a revalidation's changed rows, looked
-- up by (partition, seq, idx) while views_raw's months are rewritten
-- (revalidate_month): each row's verdict and rule set, what the visit
-- stage decides for it now (views_raw's visit columns, migration 021;
-- times as Unix ms) and, on an engagement report, the hints it borrows
-- from its view (NULL on a view: its own stay). A Join table answers
-- joinGet in memory: changes are few next to the rows copied. Dropped
-- first, so a rerun starts from what it judged itself.
DROP TABLE IF EXISTS revalidate_changes SYNC;

CREATE TABLE revalidate_changes
(
    partition          UInt16,
    seq                UInt64,
    idx                UInt32,
    verdict            String,
    rules              String,
    visit_set          UInt8,
    view_ms            Int64,
    start_ms           Int64,
    entry_page         String,
    entry_ref_host     String,
    entry_ref_source   String,
    entry_utm_source   String,
    entry_utm_medium   String,
    entry_utm_campaign String,
    prev_page          String,
    d_visits           Int8,
    d_bounces          Int8,
    d_visit_ms         Int32,
    d_engaged_ms       Int32,
    eng_from           Int8,
    eng_to             Int8,
    scroll_from        Int8,
    scroll_to          Int8,
    hints_present      Nullable(UInt8),
    screen_w           Nullable(UInt16),
    screen_h           Nullable(UInt16),
    screen             Nullable(String)
)
ENGINE = Join(ANY, LEFT, partition, seq, idx);

-- revalidate_drop: the changes table, once every month is rewritten.
DROP TABLE IF EXISTS revalidate_changes SYNC;

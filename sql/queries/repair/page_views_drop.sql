-- page_views_drop: last step of rebuilding page_views, once every
-- partition is swapped: the staging table goes.
DROP TABLE IF EXISTS page_views_rebuild SYNC

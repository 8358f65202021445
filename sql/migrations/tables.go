package migrations

// The tables the schema defines that Go code names.

// RawTable is the table of every judged event, the source rollups are
// rebuilt from.
const RawTable = "views_raw"

// DimRollupTable holds the creator dashboard's breakdowns (migration 008).
const DimRollupTable = "dim_rollup"

// PageRollupTable holds the public counts (migration 004).
const PageRollupTable = "page_rollup"

// RejectedRollupTable holds the rejected events per site, reason, UTC hour,
// user agent (its first 300 bytes), browser and device class and, for
// datacenter verdicts, AS number (migration 019): the invalid-traffic
// report's top lists. Its rows expire with views_raw's.
const RejectedRollupTable = "rejected_rollup"

// EngagementRollupTable holds the engagement and visit figures per site,
// UTC hour and day, dimension and value, summed from the verdicts' visit
// deltas (migration 021; docs/engagement.md, "Storage").
const EngagementRollupTable = "engagement_rollup"

// PageViewsTable holds every valid view ordered by page, for one page's
// breakdowns (migration 011). Its rows come from views_raw and expire
// with them.
const PageViewsTable = "page_views"

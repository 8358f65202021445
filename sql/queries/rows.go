package queries

import "time"

// The row type of every named query: the columns it returns, by name
// (`ch` tags, as store.Select reads them) and Go type. TestNamedQueryRows
// runs each query on a migrated empty store and fails when a query has no
// entry or its columns and types differ from its row type. Statements
// that return nothing (DDL, INSERT, ALTER) are NoRows.

// NoRows marks a statement that returns no rows.
type NoRows struct{}

// RowType returns a zero value of the named query's row type, or nil when
// the name has none.
func RowType(name string) any { return rowTypes[name] }

var rowTypes = map[string]any{
	ClusterCheck:               ClusterCheckRow{},
	CorrectionsList:            CorrectionsListRow{},
	CorrectionsRecord:          NoRows{},
	DetachedParts:              DetachedPartsRow{},
	ExplainEvent:               ExplainEventRow{},
	ExplainHistory:             ExplainHistoryRow{},
	Feed:                       NoRows{},
	FeedBacklog:                FeedBacklogRow{},
	FeedDone:                   NoRows{},
	FeedNextBatch:              FeedNextBatchRow{},
	FeedProgress:               FeedProgressRow{},
	FeedRecord:                 NoRows{},
	InvalidASNs:                InvalidASNsRow{},
	InvalidByDay:               InvalidByDayRow{},
	InvalidEngagement:          InvalidEngagementRow{},
	InvalidOrigins:             InvalidOriginsRow{},
	InvalidTopAgents:           InvalidTopAgentsRow{},
	InvalidTopClasses:          InvalidTopClassesRow{},
	MigrationsApplied:          MigrationsAppliedRow{},
	MigrationsInit:             NoRows{},
	MigrationsRecord:           NoRows{},
	PageCount:                  PageCountRow{},
	PageCounts:                 PageCountsRow{},
	PageEngagedCounts:          PageEngagedCountsRow{},
	PartitionEvents:            PartitionEventsRow{},
	PartitionMaxSeq:            PartitionMaxSeqRow{},
	PendingStored:              PendingStoredRow{},
	PendingUnfed:               PendingUnfedRow{},
	"raw_dims":                 RawDimsRow{},
	RawLost:                    RawLostRow{},
	RawMonths:                  RawMonthsRow{},
	RawRetention:               RawRetentionRow{},
	RawRetentionSet:            NoRows{},
	"raw_signals":              RawSignalsRow{},
	Reasons:                    ReasonsRow{},
	RevalidateEvents:           RevalidateEventsRow{},
	RevalidatePageValid:        RevalidatePageValidRow{},
	RevalidateRecord:           NoRows{},
	RevalidateStored:           RevalidateStoredRow{},
	RuleVersions:               RuleVersionsRow{},
	SiteCount:                  SiteCountRow{},
	SiteDelete:                 NoRows{},
	SiteRows:                   SiteRowsRow{},
	SiteTables:                 SiteTablesRow{},
	SitesLastView:              SitesLastViewRow{},
	"stats_breakdown":          StatsBreakdownRow{},
	"stats_breakdown_uniques":  StatsBreakdownUniquesRow{},
	"stats_filtered_pages":     StatsFilteredPagesRow{},
	"stats_filtered_reasons":   StatsFilteredReasonsRow{},
	"stats_page_exact":         StatsPageExactRow{},
	"stats_page_total":         StatsPageTotalRow{},
	"stats_realtime":           StatsRealtimeRow{},
	"stats_reasons":            StatsReasonsRow{},
	"stats_summary":            StatsSummaryRow{},
	"stats_engagement":         StatsEngagementRow{},
	"stats_engagement_values":  StatsEngagementValuesRow{},
	"stats_engagement_series":  StatsEngagementSeriesRow{},
	"stats_engagement_ranking": StatsEngagementRankingRow{},
	TopPages:                   TopPagesRow{},
	Verdicts:                   VerdictsRow{}, // Statements that need a cluster, a detached part or a revalidation's
	// table to run; their rows are checked where those exist.
	ClusterDatabase:          NoRows{},
	ClusterMigrationsApplied: MigrationsAppliedRow{},
	ClusterMigrationsInit:    NoRows{},
	ClusterMigrationsRecord:  NoRows{},
	DropDetachedPart:         NoRows{},
	RawRetentionSetCluster:   NoRows{},
	RevalidateMonthChanges:   RevalidateMonthChangesRow{},
	"stats_breakdown_page":   StatsBreakdownPageRow{},
	"stats_page_series":      StatsSeriesRow{},
	"stats_reason_series":    StatsReasonSeriesRow{},
	"stats_series":           StatsSeriesRow{},
	// The filtered reads (api/stats, filter.go) share the unfiltered ones'
	// row types but one.
	"stats_filter_total":             StatsPageTotalRow{},
	"stats_filter_series":            StatsSeriesRow{},
	"stats_filter_breakdown":         StatsBreakdownRow{},
	"stats_filter_engagement":        StatsEngagementRow{},
	"stats_filter_engagement_series": StatsEngagementSeriesRow{},
	"stats_filter_views":             StatsFilterViewsRow{},
	"stats_filter_views_channel":     StatsFilterViewsRow{},
	"stats_first_day":                StatsFirstDayRow{},
}

// StatsFirstDayRow is a row of stats_first_day.sql.
type StatsFirstDayRow struct {
	T    uint32 `ch:"t"`
	Days uint64 `ch:"days"`
}

// StatsFilterViewsRow is a row of stats_filter_views.sql.
type StatsFilterViewsRow struct {
	Value       string `ch:"value"`
	T           uint32 `ch:"t"`
	Views       uint64 `ch:"views"`
	Uniques     uint64 `ch:"uniques"`
	TotalValues uint64 `ch:"total_values"`
}

// StatsBreakdownPageRow is a row of stats_breakdown_page.sql.
type StatsBreakdownPageRow struct {
	Value       string `ch:"value"`
	Views       uint64 `ch:"views"`
	Uniques     uint64 `ch:"uniques"`
	TotalValues uint64 `ch:"total_values"`
}

// RevalidateMonthChangesRow is a row of revalidate_month_changes.sql.
type RevalidateMonthChangesRow struct {
	Count uint64 `ch:"count()"`
}

// StatsSeriesRow is a row of stats_series.sql and stats_page_series.sql.
type StatsSeriesRow struct {
	T       uint32 `ch:"t"`
	Views   uint64 `ch:"views"`
	Uniques uint64 `ch:"uniques"`
}

// StatsReasonSeriesRow is a row of stats_reason_series.sql.
type StatsReasonSeriesRow struct {
	T      uint32 `ch:"t"`
	Reason string `ch:"reason"`
	Events uint64 `ch:"events"`
}

// ClusterCheckRow is a row of cluster_check.sql.
type ClusterCheckRow struct {
	Hosts      *uint64 `ch:"hosts"`
	Replicas   *uint32 `ch:"replicas"`
	Foreground uint8   `ch:"foreground"`
	Quorum     string  `ch:"quorum"`
	Db         string  `ch:"db"`
}

// CorrectionsListRow is a row of corrections_list.sql.
type CorrectionsListRow struct {
	Id        string `ch:"id"`
	State     string `ch:"state"`
	Site      string `ch:"site"`
	Kind      string `ch:"kind"`
	Value     string `ch:"value"`
	RangeFrom int64  `ch:"range_from"`
	RangeTo   int64  `ch:"range_to"`
	AddedAt   int64  `ch:"added_at"`
	AddedBy   string `ch:"added_by"`
	AddedWhy  string `ch:"added_why"`
	UndoneAt  int64  `ch:"undone_at"`
	UndoneBy  string `ch:"undone_by"`
	UndoneWhy string `ch:"undone_why"`
}

// DetachedPartsRow is a row of detached_parts.sql.
type DetachedPartsRow struct {
	Table       string  `ch:"table"`
	Name        string  `ch:"name"`
	Reason      *string `ch:"reason"`
	PartitionId *string `ch:"partition_id"`
	BytesOnDisk uint64  `ch:"bytes_on_disk"`
	Modified    string  `ch:"modified"`
	Covered     uint8   `ch:"covered"`
}

// ExplainEventRow is a row of explain_event.sql: revalidate_events.sql's
// columns and the event's verdict, rule set and partition.
type ExplainEventRow struct {
	RevalidateEventsRow
	ToStringVerdict string `ch:"toString(verdict)"`
	Rules           string `ch:"rules"`
	Partition       uint16 `ch:"partition"`
}

// ExplainHistoryRow is a row of explain_history.sql.
type ExplainHistoryRow struct {
	EarlierSameID  uint64 `ch:"earlier_same_id"`
	VisitorViews   uint64 `ch:"visitor_views"`
	NetworkViews   uint64 `ch:"network_views"`
	NetworkUAs     uint64 `ch:"network_uas"`
	EarlierPage    uint64 `ch:"earlier_page"`
	LastPageViewMs int64  `ch:"last_page_view_ms"`
}

// FeedBacklogRow is a row of feed_backlog.sql.
type FeedBacklogRow struct {
	Partition uint16 `ch:"partition"`
	Last      uint64 `ch:"last"`
	Rows      uint64 `ch:"rows"`
}

// FeedNextBatchRow is a row of feed_next_batch.sql.
type FeedNextBatchRow struct {
	PlusGreatestSubquery1Subquery21 *uint64 `ch:"plus(greatest(_subquery_1, _subquery_2), 1)"`
}

// FeedProgressRow is a row of feed_progress.sql.
type FeedProgressRow struct {
	Partition                             uint16 `ch:"partition"`
	ArgMaxFirstLast                       uint64 `ch:"argMax(first, last)"`
	MaxLast                               uint64 `ch:"max(last)"`
	ToUnixTimestamp64MilliArgMaxSinceLast int64  `ch:"toUnixTimestamp64Milli(argMax(since, last))"`
	Completed                             uint64 `ch:"completed"`
}

// InvalidASNsRow is a row of invalid_asns.sql.
type InvalidASNsRow struct {
	Asn    uint32 `ch:"asn"`
	Events uint64 `ch:"events"`
}

// InvalidByDayRow is a row of invalid_by_day.sql.
type InvalidByDayRow struct {
	Day     string `ch:"day"`
	Verdict string `ch:"verdict"`
	Events  uint64 `ch:"events"`
}

// InvalidEngagementRow is a row of invalid_engagement.sql.
type InvalidEngagementRow struct {
	Dim         string `ch:"dim"`
	Value       string `ch:"value"`
	Views       uint64 `ch:"views"`
	Engaged     uint64 `ch:"engaged"`
	SiteViews   uint64 `ch:"site_views"`
	SiteEngaged uint64 `ch:"site_engaged"`
	Missing     int64  `ch:"missing"`
}

// InvalidOriginsRow is a row of invalid_origins.sql.
type InvalidOriginsRow struct {
	Origin string `ch:"origin"`
	Events uint64 `ch:"events"`
}

// InvalidTopAgentsRow is a row of invalid_top_agents.sql.
type InvalidTopAgentsRow struct {
	Verdict   string `ch:"verdict"`
	Ua        string `ch:"ua"`
	UaCut     uint8  `ch:"ua_cut"`
	UaBrowser string `ch:"ua_browser"`
	UaDevice  string `ch:"ua_device"`
	Events    uint64 `ch:"events"`
}

// InvalidTopClassesRow is a row of invalid_top_classes.sql.
type InvalidTopClassesRow struct {
	Verdict string `ch:"verdict"`
	Browser string `ch:"browser"`
	Device  string `ch:"device"`
	Events  uint64 `ch:"events"`
}

// MigrationsAppliedRow is a row of migrations_applied.sql.
type MigrationsAppliedRow struct {
	Version uint32 `ch:"version"`
}

// PageCountRow is a row of page_count.sql.
type PageCountRow struct {
	Views   uint64 `ch:"views"`
	Uniques uint64 `ch:"uniques"`
}

// PageCountsRow is a row of page_counts.sql.
type PageCountsRow struct {
	Page    string `ch:"page"`
	Views   uint64 `ch:"views"`
	Uniques uint64 `ch:"uniques"`
}

// PartitionEventsRow is a row of partition_events.sql.
type PartitionEventsRow struct {
	Seq     uint64 `ch:"seq"`
	Idx     uint32 `ch:"idx"`
	EventId string `ch:"event_id"`
	TimeMs  int64  `ch:"time_ms"`
}

// PartitionMaxSeqRow is a row of partition_max_seq.sql.
type PartitionMaxSeqRow struct {
	MaxSeq uint64 `ch:"max_seq"`
}

// PendingStoredRow is a row of pending_stored.sql.
type PendingStoredRow struct {
	Partition uint16 `ch:"partition"`
	MaxBatch  uint64 `ch:"max(batch)"`
}

// PendingUnfedRow is a row of pending_unfed.sql.
type PendingUnfedRow struct {
	Site                          string `ch:"site"`
	Page                          string `ch:"page"`
	Count                         uint64 `ch:"count()"`
	ToUnixTimestamp64MilliMinTime int64  `ch:"toUnixTimestamp64Milli(min(time))"`
}

// RawDimsRow is a row of raw_dims.sql.
type RawDimsRow struct {
	Page        string `ch:"page"`
	UtmSource   string `ch:"utm_source"`
	UtmMedium   string `ch:"utm_medium"`
	UtmCampaign string `ch:"utm_campaign"`
	Country     string `ch:"country"`
	RefHost     string `ch:"ref_host"`
	RefSource   string `ch:"ref_source"`
	Browser     string `ch:"browser"`
	Os          string `ch:"os"`
	Device      string `ch:"device"`
	Screen      string `ch:"screen"`
	Verdict     string `ch:"verdict"`
}

// RawLostRow is a row of raw_lost.sql.
type RawLostRow struct {
	Site   string `ch:"site"`
	Stored uint64 `ch:"stored"`
	Raw    uint64 `ch:"raw"`
	Lost   int64  `ch:"lost"`
}

// RawMonthsRow is a row of raw_months.sql.
type RawMonthsRow struct {
	Month string `ch:"month"`
	Rows  uint64 `ch:"rows"`
}

// RawRetentionRow is a row of raw_retention.sql.
type RawRetentionRow struct {
	Days uint32 `ch:"days"`
}

// RawSignalsRow is a row of raw_signals.sql.
type RawSignalsRow struct {
	Page     string `ch:"page"`
	Browser  string `ch:"browser"`
	ReqFlags uint16 `ch:"req_flags"`
	Asn      uint32 `ch:"asn"`
	Verdict  string `ch:"verdict"`
}

// ReasonsRow is a row of reasons.sql.
type ReasonsRow struct {
	Verdict string `ch:"verdict"`
	Views   uint64 `ch:"views"`
}

// RevalidateEventsRow is a row of revalidate_events.sql.
type RevalidateEventsRow struct {
	Seq                        uint64 `ch:"seq"`
	Idx                        uint32 `ch:"idx"`
	ToUnixTimestamp64MilliTime int64  `ch:"toUnixTimestamp64Milli(time)"`
	Site                       string `ch:"site"`
	Page                       string `ch:"page"`
	Referrer                   string `ch:"referrer"`
	Ua                         string `ch:"ua"`
	EventId                    string `ch:"event_id"`
	Visitor                    uint64 `ch:"visitor"`
	Network                    uint64 `ch:"network"`
	ToUInt8Webdriver           uint8  `ch:"toUInt8(webdriver)"`
	ToUInt8Datacenter          uint8  `ch:"toUInt8(datacenter)"`
	ToStringSource             string `ch:"toString(source)"`
	ToUInt8HintsPresent        uint8  `ch:"toUInt8(hints_present)"`
	ScreenW                    uint16 `ch:"screen_w"`
	ScreenH                    uint16 `ch:"screen_h"`
	Languages                  uint8  `ch:"languages"`
	ToUInt8Tz                  uint8  `ch:"toUInt8(tz)"`
	ToUInt8UaData              uint8  `ch:"toUInt8(ua_data)"`
	ToUInt8SecureContext       uint8  `ch:"toUInt8(secure_context)"`
	ToUInt8WindowReported      uint8  `ch:"toUInt8(window_reported)"`
	WindowW                    uint16 `ch:"window_w"`
	WindowH                    uint16 `ch:"window_h"`
	UtmSource                  string `ch:"utm_source"`
	UtmMedium                  string `ch:"utm_medium"`
	UtmCampaign                string `ch:"utm_campaign"`
	Country                    string `ch:"country"`
	ReqFlags                   uint16 `ch:"req_flags"`
	Asn                        uint32 `ch:"asn"`
	Origin                     string `ch:"origin"`
	Kind                       uint8  `ch:"kind"`
	EngagedMs                  uint32 `ch:"engaged_ms"`
	Scroll                     uint8  `ch:"scroll"`
	AgeMs                      uint32 `ch:"age_ms"`
}

// RevalidatePageValidRow is a row of revalidate_page_valid.sql.
type RevalidatePageValidRow struct {
	Page  string `ch:"page"`
	Count uint64 `ch:"count()"`
}

// RevalidateStoredRow is a row of revalidate_stored.sql.
type RevalidateStoredRow struct {
	Seq              uint64 `ch:"seq"`
	Idx              uint32 `ch:"idx"`
	T                int64  `ch:"t"`
	Kind             uint8  `ch:"kind"`
	Verdict          string `ch:"verdict"`
	Page             string `ch:"page"`
	Rules            string `ch:"rules"`
	VisitSet         uint8  `ch:"visit_set"`
	ViewMS           int64  `ch:"view_ms"`
	StartMS          int64  `ch:"start_ms"`
	EntryPage        string `ch:"entry_page"`
	EntryRefHost     string `ch:"entry_ref_host"`
	EntryRefSource   string `ch:"entry_ref_source"`
	EntryUTMSource   string `ch:"entry_utm_source"`
	EntryUTMMedium   string `ch:"entry_utm_medium"`
	EntryUTMCampaign string `ch:"entry_utm_campaign"`
	PrevPage         string `ch:"prev_page"`
	DVisits          int8   `ch:"d_visits"`
	DBounces         int8   `ch:"d_bounces"`
	DVisitMS         int32  `ch:"d_visit_ms"`
	DEngagedMS       int32  `ch:"d_engaged_ms"`
	EngFrom          int8   `ch:"eng_from"`
	EngTo            int8   `ch:"eng_to"`
	ScrollFrom       int8   `ch:"scroll_from"`
	ScrollTo         int8   `ch:"scroll_to"`
	HintsPresent     uint8  `ch:"hints_present"`
	ScreenW          uint16 `ch:"screen_w"`
	ScreenH          uint16 `ch:"screen_h"`
	Screen           string `ch:"screen"`
}

// RuleVersionsRow is a row of rule_versions.sql.
type RuleVersionsRow struct {
	Rules  string `ch:"rules"`
	Events uint64 `ch:"events"`
	Valid  uint64 `ch:"valid"`
	First  string `ch:"first"`
	Last   string `ch:"last"`
}

// SiteCountRow is a row of site_count.sql.
type SiteCountRow struct {
	Views   uint64 `ch:"views"`
	Uniques uint64 `ch:"uniques"`
}

// SiteRowsRow is a row of site_rows.sql.
type SiteRowsRow struct {
	Rows uint64 `ch:"rows"`
}

// SiteTablesRow is a row of site_tables.sql.
type SiteTablesRow struct {
	Name string `ch:"name"`
}

// SitesLastViewRow is a row of sites_last_view.sql.
type SitesLastViewRow struct {
	Site     string    `ch:"site"`
	LastView time.Time `ch:"last_view"`
}

// StatsBreakdownRow is a row of stats_breakdown.sql.
type StatsBreakdownRow struct {
	Value       string `ch:"value"`
	Views       uint64 `ch:"views"`
	TotalValues uint64 `ch:"total_values"`
}

// StatsBreakdownUniquesRow is a row of stats_breakdown_uniques.sql.
type StatsBreakdownUniquesRow struct {
	Value   string `ch:"value"`
	Uniques uint64 `ch:"uniques"`
}

// StatsFilteredPagesRow is a row of stats_filtered_pages.sql.
type StatsFilteredPagesRow struct {
	TopPage  string `ch:"top_page"`
	Filtered uint64 `ch:"filtered"`
}

// StatsFilteredReasonsRow is a row of stats_filtered_reasons.sql.
type StatsFilteredReasonsRow struct {
	Page   string `ch:"page"`
	Reason string `ch:"reason"`
	Events uint64 `ch:"events"`
}

// StatsPageExactRow is a row of stats_page_exact.sql.
type StatsPageExactRow struct {
	Page    string `ch:"page"`
	Uniques uint64 `ch:"uniques"`
}

// StatsPageTotalRow is a row of stats_page_total.sql.
type StatsPageTotalRow struct {
	Current uint8  `ch:"current"`
	Views   uint64 `ch:"views"`
	Uniques uint64 `ch:"uniques"`
}

// StatsRealtimeRow is a row of stats_realtime.sql.
type StatsRealtimeRow struct {
	Views    uint64 `ch:"views"`
	Visitors uint64 `ch:"visitors"`
}

// StatsReasonsRow is a row of stats_reasons.sql.
type StatsReasonsRow struct {
	Current uint8  `ch:"current"`
	Reason  string `ch:"reason"`
	Events  uint64 `ch:"events"`
}

// StatsEngagementRow is a row of stats_engagement.sql.
type StatsEngagementRow struct {
	Current uint8  `ch:"current"`
	Part    string `ch:"part"`
	Key     int16  `ch:"key"`
	N       int64  `ch:"n"`
}

// StatsEngagementValuesRow is a row of stats_engagement_values.sql.
type StatsEngagementValuesRow struct {
	Value string `ch:"value"`
	Part  string `ch:"part"`
	Key   int16  `ch:"key"`
	N     int64  `ch:"n"`
}

// StatsEngagementSeriesRow is a row of stats_engagement_series.sql.
type StatsEngagementSeriesRow struct {
	T    uint32 `ch:"t"`
	Part string `ch:"part"`
	Key  int16  `ch:"key"`
	N    int64  `ch:"n"`
}

// StatsEngagementRankingRow is a row of stats_engagement_ranking.sql.
type StatsEngagementRankingRow struct {
	Value       string `ch:"value"`
	N           int64  `ch:"n"`
	Bounces     int64  `ch:"s_bounces"`
	VisitMS     int64  `ch:"s_visit_ms"`
	TotalValues uint64 `ch:"total_values"`
}

// PageEngagedCountsRow is a row of page_engaged_counts.sql.
type PageEngagedCountsRow struct {
	Page  string `ch:"page"`
	Views uint64 `ch:"views"`
	Open  uint64 `ch:"open"`
}

// StatsSummaryRow is a row of stats_summary.sql.
type StatsSummaryRow struct {
	Current uint8  `ch:"current"`
	Reason  string `ch:"reason"`
	Views   uint64 `ch:"views"`
	Uniques uint64 `ch:"uniques"`
}

// TopPagesRow is a row of top_pages.sql.
type TopPagesRow struct {
	Site    string `ch:"site"`
	TopPage string `ch:"top_page"`
}

// VerdictsRow is a row of verdicts.sql.
type VerdictsRow struct {
	Partition uint16 `ch:"partition"`
	Seq       uint64 `ch:"seq"`
	Idx       uint32 `ch:"idx"`
	EventId   string `ch:"event_id"`
	Verdict   string `ch:"verdict"`
}

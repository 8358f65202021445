// Package rollup writes verdicts into ClickHouse: it batches the verdicts of
// consecutive stream messages of one partition and inserts each batch
// exactly once; the recorded batches are the partition's progress. It also
// runs the schema
// migrations from package sql/migrations. The materialized views defined there turn the
// inserted rows into the per-page rollups; rollup itself never aggregates.
//
// Exactly-once rests on two facts: a batch is a fixed range of stream
// sequences, recorded (as an intent) before it is inserted, and it is
// inserted with an insert_deduplication_token derived from that range. A
// batch redelivered after a crash is rebuilt from the intent with the same
// range, so ClickHouse drops the repeat, materialized views included.
// Because each batch is recorded only after the previous one was inserted,
// the record also says where a restarted partition resumes: at the recorded
// batch's first message.
//
// It also keeps the store honest about damage: PartsMonitor reports parts
// the engine set aside, Recount compares every rollup with a recount from
// views_raw, Rebuild recounts the rollups and swaps them in, and
// ApplyRawRetention sets how long views_raw keeps events. It never rebuilds
// on its own: a rebuild from a damaged views_raw would drop counts, so an
// operator decides (`viewcount repair rollups`).
package rollup

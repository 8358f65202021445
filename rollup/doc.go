// Package rollup writes verdicts into ClickHouse: it batches the verdicts of
// consecutive stream messages of one partition and inserts each batch
// exactly once; the recorded batches are the partition's progress
// (internal/progress). Each Writer then feeds what it stored to the
// rollups (internal/feed): the materialized views defined by package
// sql/migrations turn the fed rows into the per-page rollups; rollup
// itself never aggregates, and never changes the schema.
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
// Repairing the rollups is package rollup/repair's job.
package rollup

// Package rollup writes verdicts into ClickHouse: it batches the verdicts of
// consecutive stream messages of one partition, inserts each batch exactly
// once, and only then acknowledges the messages. It also runs the schema
// migrations from package sql. The materialized views defined there turn the
// inserted rows into the per-page rollups; rollup itself never aggregates.
//
// Exactly-once rests on two facts: a batch is a fixed range of stream
// sequences, recorded (as an intent) before it is inserted, and it is
// inserted with an insert_deduplication_token derived from that range. A
// batch redelivered after a crash is rebuilt from the intent with the same
// range, so ClickHouse drops the repeat, materialized views included.
package rollup

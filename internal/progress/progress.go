// Package progress reads and writes each partition's progress record, its
// key in the VC_ROLLUP bucket: the stream range of the partition's last
// batch insert. The rollup writer records it before each insert; the
// validators resume after it, the pending counts and the repairs read it.
//
// It belongs to no role, and writes a record only where its doc says so:
// the writer's order (record, insert, next record) is what makes the
// record a partition's progress.
package progress

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"
)

// Bucket is where the records are kept: the VC_ROLLUP bucket.
type Bucket interface {
	Get(ctx context.Context, key string) (jetstream.KeyValueEntry, error)
	Put(ctx context.Context, key string, value []byte) (uint64, error)
}

// Record is a partition's record in the VC_ROLLUP bucket: the stream
// range of its last batch. Every message before First is in the store; the
// batch itself may or may not be (see rollup.Writer).
type Record struct {
	First uint64 `json:"first"`
	Last  uint64 `json:"last"`
}

// Key is partition p's key in the VC_ROLLUP bucket.
func Key(p int) string { return "p" + strconv.Itoa(p) }

// Read returns partition p's record; ok is false when it has none.
func Read(ctx context.Context, b Bucket, p int) (pr Record, ok bool, err error) {
	e, err := b.Get(ctx, Key(p))
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return Record{}, false, nil
	case err != nil:
		return Record{}, false, fmt.Errorf("progress: partition %d: read intent: %w", p, err)
	}
	if err := json.Unmarshal(e.Value(), &pr); err != nil {
		return Record{}, false, fmt.Errorf("progress: partition %d: decode intent: %w", p, err)
	}
	return pr, true, nil
}

// Write sets partition p's record so that it resumes right after stream
// sequence after: for repairs, with no validator running.
func Write(ctx context.Context, b Bucket, p int, after uint64) error {
	v, _ := json.Marshal(Record{First: after + 1, Last: after})
	if _, err := b.Put(ctx, Key(p), v); err != nil {
		return fmt.Errorf("progress: partition %d: write progress: %w", p, err)
	}
	return nil
}

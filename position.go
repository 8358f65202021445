package viewcount

import (
	"errors"
	"strconv"
	"strings"
)

// StreamPosition is where events are in the VIEWS stream: the partition of
// their message and its stream sequence. The beacon answers it for the
// events it made durable (in String's form), and a reader showing a page's
// count passes it back (the counts endpoint's own views): a count read
// while the partition's feeds had not reached Seq cannot include those
// events, since a row reaches the rollups only by a feed of a batch at or
// after its own sequence (feed.Progress). The zero value is no
// position.
type StreamPosition struct {
	Partition int
	Seq       uint64
}

// IsZero reports whether p is no position.
func (p StreamPosition) IsZero() bool { return p.Seq == 0 }

// String is p as "partition:sequence", e.g. "2:18446".
func (p StreamPosition) String() string {
	return strconv.Itoa(p.Partition) + ":" + strconv.FormatUint(p.Seq, 10)
}

// ErrBadPosition is returned by ParseStreamPosition.
var ErrBadPosition = errors.New(`want "partition:sequence" as the beacon answered, e.g. "2:18446"`)

// maxPartitions is one more than the highest partition the store records
// (views_raw.partition is a UInt16).
const maxPartitions = 1 << 16

// ParseStreamPosition reads String's form: a partition below 65536 and a
// sequence of at least 1, in decimal digits only (no sign, no spaces).
func ParseStreamPosition(s string) (StreamPosition, error) {
	part, seq, ok := strings.Cut(s, ":")
	if !ok || !digits(part) || !digits(seq) {
		return StreamPosition{}, ErrBadPosition
	}
	p, err1 := strconv.Atoi(part)
	n, err2 := strconv.ParseUint(seq, 10, 64)
	if err1 != nil || err2 != nil || p >= maxPartitions || n == 0 {
		return StreamPosition{}, ErrBadPosition
	}
	return StreamPosition{Partition: p, Seq: n}, nil
}

// digits reports whether s is 1 to 20 ASCII digits.
func digits(s string) bool {
	if len(s) == 0 || len(s) > 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

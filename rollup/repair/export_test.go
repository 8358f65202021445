package repair

import "time"

// SetFeedStall sets how long a recount waits for a feed that makes no
// progress, until the test ends.
func SetFeedStall(d time.Duration) (restore func()) {
	old := feedStall
	feedStall = d
	return func() { feedStall = old }
}

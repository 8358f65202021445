package repair

import "time"

// SetFeedWaitHook makes f run when a recount starts waiting for a feed in
// flight, until the test ends.
func SetFeedWaitHook(f func()) (restore func()) {
	old := onFeedWait
	onFeedWait = f
	return func() { onFeedWait = old }
}

// SetFeedStall sets how long a recount waits for a feed that makes no
// progress, until the test ends.
func SetFeedStall(d time.Duration) (restore func()) {
	old := feedStall
	feedStall = d
	return func() { feedStall = old }
}

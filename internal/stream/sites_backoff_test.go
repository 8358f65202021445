package stream

import (
	"testing"
	"time"
)

// TestSitesBackoff: the wait after a lost race is drawn below a bound that
// doubles from updateBackoffMin and stops at updateBackoffMax, however many
// races were lost.
func TestSitesBackoff(t *testing.T) {
	var asked int64
	s := &Sites{randN: func(n int64) int64 { asked = n; return n - 1 }}
	f := func(lost int, bound time.Duration) {
		t.Helper()
		if got := s.backoff(lost); time.Duration(asked) != bound || got != bound-1 {
			t.Errorf("backoff(%d) = %v drawn below %v, want below %v", lost, got, time.Duration(asked), bound)
		}
	}
	f(1, time.Millisecond)
	f(2, 2*time.Millisecond)
	f(7, 64*time.Millisecond)
	f(8, updateBackoffMax)
	f(1000, updateBackoffMax)
}

package viewcount

import "testing"

func TestCapUniques(t *testing.T) {
	f := func(views, uniques, want uint64) {
		t.Helper()
		if got := CapUniques(views, uniques); got != want {
			t.Errorf("CapUniques(%d, %d) = %d, want %d", views, uniques, got, want)
		}
	}
	f(0, 0, 0)
	f(717, 712, 712)
	f(717, 717, 717)
	f(717, 722, 717) // an estimate above the views it counts
	f(192, 193, 192)
	f(5, 0, 0) // a reading that found no visitor is not made up
}

package validate

import "testing"

func TestPerPartition(t *testing.T) {
	for _, c := range []struct{ budget, n, want int }{
		{1 << 22, 4, 1 << 20},
		{1 << 19, 4, 1 << 17},
		{1 << 22, 1, 1 << 22},
		{1 << 22, 0, 1 << 22}, // nothing owned yet: the whole budget
		{3, 8, 1},             // never zero, which would mean "default"
	} {
		if got := perPartition(c.budget, c.n); got != c.want {
			t.Errorf("perPartition(%d, %d) = %d, want %d", c.budget, c.n, got, c.want)
		}
	}
}

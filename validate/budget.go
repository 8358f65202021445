package validate

import "github.com/viewcount/viewcount/validate/judge"

// perPartition is one partition's share of a process budget when the
// process validates n partitions; at least 1, since 0 means "default".
func perPartition(budget, n int) int { return max(1, budget/max(1, n)) }

// Budget is what one validating process's tables may hold over all the
// partitions it validates (judge.Config's capacities, summed). A zero
// field is the built-in process budget (judge.ProcessWindowKeys and the
// others); `viewcount serve` sizes it from its memory budget.
type Budget struct {
	WindowKeys, MaxHeld, MaxOpenViews, MaxVisits int
}

// perPartition fills cfg's zero capacities with one partition's share of
// b when the process validates n partitions, so what the process holds,
// and how far back its windows see, depends on its traffic, not on how
// many partitions that traffic is divided into.
func (b Budget) perPartition(cfg judge.Config, n int) judge.Config {
	for _, f := range []struct {
		p           *int
		given, dflt int
	}{
		{&cfg.MaxKeys, b.WindowKeys, judge.ProcessWindowKeys},
		{&cfg.MaxHeld, b.MaxHeld, judge.ProcessMaxHeld},
		{&cfg.MaxOpenViews, b.MaxOpenViews, judge.ProcessOpenViews},
		{&cfg.MaxVisits, b.MaxVisits, judge.ProcessVisits},
	} {
		if *f.p != 0 {
			continue
		}
		if f.given <= 0 {
			f.given = f.dflt
		}
		*f.p = perPartition(f.given, n)
	}
	return cfg
}

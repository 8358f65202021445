package validate

// perPartition is one partition's share of a process budget when the
// process validates n partitions; at least 1, since 0 means "default".
func perPartition(budget, n int) int { return max(1, budget/max(1, n)) }

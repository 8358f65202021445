//go:build !faults

package store

// withFaults is the identity in production builds: the fault hook of the
// fault-injection suite (fault_on.go) is compiled only with -tags faults.
func withFaults(s Store) Store { return s }

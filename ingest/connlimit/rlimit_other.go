//go:build !unix

package connlimit

// RaiseFileLimit reports a limit of 4096 open files where the system has no
// RLIMIT_NOFILE to read.
func RaiseFileLimit() (soft, hard uint64, err error) { return 4096, 4096, nil }

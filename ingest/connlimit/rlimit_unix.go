//go:build unix

package connlimit

import (
	"fmt"
	"syscall"
)

// RaiseFileLimit raises the process's soft limit on open files to its hard
// limit (Go's runtime already does so at start on most systems; this makes it
// explicit and reports both) and returns the limits now in force.
func RaiseFileLimit() (soft, hard uint64, err error) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, 0, fmt.Errorf("connlimit: reading the file limit: %w", err)
	}
	if r.Cur < r.Max {
		raised := r
		raised.Cur = r.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err != nil {
			return r.Cur, r.Max, fmt.Errorf("connlimit: raising the file limit to %d: %w", r.Max, err)
		}
		r = raised
	}
	return r.Cur, r.Max, nil
}

//go:build faults

package faults

import (
	"os"
	"testing"
)

// TestMain removes the binaries the suite built, whatever the outcome.
func TestMain(m *testing.M) {
	code := m.Run()
	if binaries.dir != "" {
		_ = os.RemoveAll(binaries.dir)
	}
	os.Exit(code)
}

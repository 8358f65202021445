package store_test

import (
	"os"
	"os/exec"
	"testing"
)

// execSelf returns a command running this test binary on the tests run
// matches, with extra environment.
func execSelf(t *testing.T, run string, env ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), exe, "-test.run="+run, "-test.v")
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

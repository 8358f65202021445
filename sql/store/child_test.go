package store

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"testing"
)

// runChild re-runs this test binary for the test named child alone, with
// the variable env set to a temporary directory (the child's data dir, and
// how it knows it is the child), under wrap when given (a command and its
// flags, such as setpriv's). The engine reads its server settings once per
// process, so tests of them run in a child of their own. t fails unless
// the child ran and passed; its output is logged.
func runChild(t *testing.T, child, env string, wrap ...string) {
	t.Helper()
	args := slices.Concat(wrap, []string{os.Args[0], "-test.run=^" + child + "$", "-test.v"})
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env+"="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("--- PASS: "+child)) {
		t.Fatalf("the child did not run:\n%s", out)
	}
	t.Logf("%s", out)
}

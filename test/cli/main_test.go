package cli

import (
	"io"

	"github.com/viewcount/viewcount/cmd/viewcount/app"
	"os"
	"testing"

	"github.com/viewcount/viewcount/test/apptest"
)

func TestMain(m *testing.M) { os.Exit(apptest.Main(m)) }

// run runs the viewcount command cmd with args in-process, as the binary
// does.
func run(cmd string, args []string, stdout, stderr io.Writer) error {
	return app.Run(append([]string{cmd}, args...), stdout, stderr)
}

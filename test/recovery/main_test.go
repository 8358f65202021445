package recovery

import (
	"os"
	"testing"

	"github.com/viewcount/viewcount/test/apptest"
)

func TestMain(m *testing.M) { os.Exit(apptest.Main(m)) }

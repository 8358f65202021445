// Package storetest gives tests a real embedded store: one chDB engine per
// test binary under a temp directory, and a fresh database for each test.
// Never a fake: the SQL under test is the SQL that ships.
//
// Tests fail (not skip) when libchdb.so is missing, so a machine without it
// cannot pass silently; VIEWCOUNT_SKIP_CHDB=1 skips them instead.
package storetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/viewcount/viewcount/sql/store"
)

// The engine is per process (chDB allows one storage path), so the test
// binary shares one, held open by keeper so per-test stores never make it
// shut down and boot again.
var shared struct {
	once     sync.Once
	dir      string
	keeper   store.Store
	template store.Store // Migrated's, once one ran
	err      error
	seq      atomic.Int64
}

const dirPrefix = "viewcount-chdb-"

// Skip reports whether chDB tests are switched off by VIEWCOUNT_SKIP_CHDB=1.
func Skip() bool { return os.Getenv("VIEWCOUNT_SKIP_CHDB") == "1" }

func boot() {
	removeStale()
	dir, err := os.MkdirTemp("", dirPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		shared.err = err
		return
	}
	shared.dir = dir
	shared.keeper, shared.err = store.Open(context.Background(), store.Config{DataDir: dir, Database: "storetest"}, nil)
}

// Open returns a store on a new, empty database of the shared engine,
// closed and dropped when the test ends.
func Open(t testing.TB) store.Store {
	t.Helper()
	s, _ := open(t)
	return s
}

// open is Open, also returning the database's name.
func open(t testing.TB) (store.Store, string) {
	t.Helper()
	if Skip() {
		t.Skip("VIEWCOUNT_SKIP_CHDB=1: skipping a test that needs libchdb.so")
	}
	shared.once.Do(boot)
	if shared.err != nil {
		t.Fatalf("chDB test engine: %v (set VIEWCOUNT_SKIP_CHDB=1 to skip chDB tests)", shared.err)
	}
	db := fmt.Sprintf("t%d_%s", shared.seq.Add(1), sanitize(t.Name()))
	s, err := store.Open(t.Context(), store.Config{DataDir: shared.dir, Database: db}, nil)
	if err != nil {
		t.Fatalf("open test store: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close test store: %v", err)
		}
		// Test-only SQL: the name is ours and sanitized.
		if err := shared.keeper.Exec(context.Background(), "DROP DATABASE IF EXISTS `"+db+"` SYNC", nil); err != nil {
			t.Errorf("drop test database: %v", err)
		}
	})
	return s, db
}

// Dir is the shared engine's DataDir, for tests of Open itself; empty
// before the first Open.
func Dir() string { return shared.dir }

// Main runs the tests, then stops the shared engine and removes its
// directory. Call it from TestMain: os.Exit(storetest.Main(m)). Without it
// the directory is removed by the next test binary that finds it orphaned.
func Main(m *testing.M) int {
	code := m.Run()
	if shared.template != nil {
		_ = shared.template.Close()
	}
	if shared.keeper != nil {
		_ = shared.keeper.Close()
	}
	if shared.dir != "" {
		_ = os.RemoveAll(shared.dir)
	}
	return code
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_]+`)

func sanitize(name string) string {
	name = unsafeChars.ReplaceAllString(name, "_")
	if len(name) > 40 {
		name = name[:40]
	}
	return strings.Trim(name, "_")
}

// removeStale deletes engine directories of test binaries that are gone.
func removeStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, d := range dirs {
		pidText, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(d), dirPrefix), "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() {
			continue
		}
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			_ = os.RemoveAll(d)
		}
	}
}

// BreakPart damages one active part of table in s's database the way a
// crash or a bad disk does (its first .bin data file cut to a few bytes)
// and makes the engine load the table again, which sets the part aside as
// broken-on-start_<name>, as chDB does on a restart. It returns the part's
// name; the test fails if there is no part to break.
func BreakPart(t testing.TB, s store.Store, table string) string {
	t.Helper()
	return breakPart(t, s, table, 1)
}

// BreakOutdatedPart is BreakPart for a part a merge already replaced (still
// on disk, waiting to be deleted): nothing is missing when it is set aside.
func BreakOutdatedPart(t testing.TB, s store.Store, table string) string {
	t.Helper()
	return breakPart(t, s, table, 0)
}

func breakPart(t testing.TB, s store.Store, table string, active int) string {
	t.Helper()
	ctx := context.Background()
	p := store.Params{"t": table, "active": strconv.Itoa(active)}
	// Test-only SQL: the statements an operator's crash stands in for.
	parts, err := store.Select[struct {
		Name string `ch:"name"`
		Path string `ch:"path"`
	}](ctx, s, "SELECT name, path FROM system.parts WHERE database = currentDatabase() AND table = {t:String} AND active = {active:UInt8} ORDER BY name LIMIT 1", p)
	if err != nil || len(parts) != 1 {
		t.Fatalf("find a part of %s: %v (%d parts)", table, err, len(parts))
	}
	name, dir := parts[0].Name, parts[0].Path
	if err := s.Exec(ctx, "DETACH TABLE {t:Identifier}", p); err != nil {
		t.Fatalf("detach %s: %v", table, err)
	}
	bins, _ := filepath.Glob(filepath.Join(dir, "*.bin"))
	if len(bins) == 0 {
		t.Fatalf("part %s of %s has no .bin file in %s", name, table, dir)
	}
	if err := os.Truncate(bins[0], 8); err != nil {
		t.Fatalf("truncate %s: %v", bins[0], err)
	}
	if err := s.Exec(ctx, "ATTACH TABLE {t:Identifier}", p); err != nil {
		t.Fatalf("attach %s: %v", table, err)
	}
	// The engine loads outdated parts in the background after ATTACH: a
	// check right after it could run before the broken part is seen
	// (TestBrokenOutdatedPartIsHarmless failed so on a loaded box).
	if err := s.Exec(ctx, "SYSTEM WAIT LOADING PARTS {t:Identifier}", p); err != nil {
		t.Fatalf("wait for the parts of %s: %v", table, err)
	}
	return name
}

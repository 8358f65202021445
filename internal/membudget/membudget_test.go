package membudget

import (
	"os"
	"strings"
	"testing"
)

// TestSplitWithinBudget: for every budget from Min up, the parts a plan
// sizes never add up to more than the budget, each is positive, and the
// parts inside Go's share fit in it.
func TestSplitWithinBudget(t *testing.T) {
	for _, engine := range []bool{true, false} {
		for b := int64(Min); b <= 64*GiB; b += b/7 + 1 {
			p, err := Split(b, engine)
			if err != nil {
				t.Fatalf("Split(%d, %v): %v", b, engine, err)
			}
			if sum := p.Code + p.Go + p.Engine; sum > b {
				t.Errorf("Split(%s, %v): code+go+engine %d > budget %d", Format(b), engine, sum, b)
			}
			if p.MarkCache+p.Caches*4 > p.Engine {
				t.Errorf("Split(%s): engine caches %d+4×%d over the engine's %d", Format(b), p.MarkCache, p.Caches, p.Engine)
			}
			if p.Validator+p.StatsCache > p.Go {
				t.Errorf("Split(%s): validator %d + stats cache %d over Go's %d", Format(b), p.Validator, p.StatsCache, p.Go)
			}
			tables := int64(p.WindowKeys)*2*WindowKeyBytes + int64(p.MaxHeld)*HeldBytes +
				int64(p.MaxOpenViews)*OpenViewBytes + int64(p.MaxVisits)*VisitBytes
			if tables > p.Validator {
				t.Errorf("Split(%s): the validator's tables hold %d, over its %d", Format(b), tables, p.Validator)
			}
			if p.WindowKeys <= 0 || p.MaxHeld <= 0 || p.MaxOpenViews <= 0 || p.MaxVisits <= 0 || p.Go <= 0 {
				t.Errorf("Split(%s, %v): a part is empty: %+v", Format(b), engine, p)
			}
			if engine != (p.Engine > 0) {
				t.Errorf("Split(%s, %v): engine share %d", Format(b), engine, p.Engine)
			}
		}
	}
}

func TestSplitRefusesTooSmall(t *testing.T) {
	_, err := Split(Min-1, true)
	if err == nil || !strings.Contains(err.Error(), "at least") {
		t.Fatalf("Split(Min-1): %v, want an error naming the minimum", err)
	}
}

func TestDefault(t *testing.T) {
	for _, c := range []struct{ machine, want int64 }{
		{0, DefaultMax},
		{1 * GiB, Min},
		{2 * GiB, Min + (2*GiB/4 - Min)},
		{24 * GiB, DefaultMax},
	} {
		if got := Default(c.machine); got != c.want {
			t.Errorf("Default(%s) = %s, want %s", Format(c.machine), Format(got), Format(c.want))
		}
	}
	if m := Machine(); m < 0 {
		t.Errorf("Machine() = %d", m)
	}
}

func TestParse(t *testing.T) {
	for in, want := range map[string]int64{
		"512MiB": 512 * MiB, "2GiB": 2 * GiB, "536870912": 512 * MiB, "100B": 100, "64KiB": 64 << 10, "1TiB": 1 << 40,
	} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "512MB", "512 MiB", "-1GiB", "1.5GiB", "99999999999TiB", "512mib"} {
		if got, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %d, want an error", in, got)
		}
	}
}

// FuzzParseFormat: Format writes what Parse reads back exactly when the
// size is a whole number of MiB, and Parse never accepts a negative size.
func FuzzParseFormat(f *testing.F) {
	for _, s := range []string{"512MiB", "1GiB", "0", "3KiB", "7B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := Parse(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("Parse(%q) = %d", s, n)
		}
		if n%MiB != 0 {
			return
		}
		back, err := Parse(Format(n))
		if err != nil || back != n {
			t.Fatalf("Parse(Format(%d)) = %d, %v", n, back, err)
		}
	})
}

func TestProcSize(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	if rss := ProcSize("/proc/self/status", "VmRSS"); rss < 1<<20 {
		t.Errorf("VmRSS = %d, want at least a MiB", rss)
	}
	if got := ProcSize("/proc/self/status", "NoSuchField"); got != 0 {
		t.Errorf("a missing field = %d, want 0", got)
	}
	if got := ProcSize("/no/such/file", "VmRSS"); got != 0 {
		t.Errorf("a missing file = %d, want 0", got)
	}
}

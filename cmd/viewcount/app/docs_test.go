package app

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/viewcount/viewcount"
)

const regenerate = "run 'make docs' (go run ./cmd/viewcount docs flags > docs/configuration.md) and commit the result"

// TestConfigurationDocs fails when the committed docs/configuration.md is
// not what `viewcount docs flags` prints now.
func TestConfigurationDocs(t *testing.T) {
	committed, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatalf("docs/configuration.md: %v; %s", err, regenerate)
	}
	want := flagsMarkdown()
	if string(committed) == want {
		return
	}
	got, gen := strings.Split(string(committed), "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(got), len(gen)); i++ {
		var a, b string
		if i < len(got) {
			a = got[i]
		}
		if i < len(gen) {
			b = gen[i]
		}
		if a != b {
			t.Fatalf("docs/configuration.md is stale (line %d is\n\t%q\nthe flag set gives\n\t%q): %s", i+1, a, b, regenerate)
		}
	}
}

// TestConfigurationDocsMachineIndependent: the page does not change with
// the environment (variables that set flags, the directory, the host), and
// documents every flag parseConfig declares, once.
func TestConfigurationDocsMachineIndependent(t *testing.T) {
	clean := flagsMarkdown()
	for k, v := range map[string]string{
		"VIEWCOUNT_LISTEN": ":9999", "VIEWCOUNT_PARTITIONS": "7", "VIEWCOUNT_SETTLE_WINDOW": "1m",
		"VIEWCOUNT_KEEP_QUERY": "true", "VIEWCOUNT_COUNTRY_DB": "/somewhere/else.mmdb", "NATS_URL": "nats://x:4222",
	} {
		t.Setenv(k, v)
	}
	if got := flagsMarkdown(); got != clean {
		t.Fatal("docs flags output depends on the environment")
	}
	wd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	host, _ := os.Hostname()
	for _, s := range []string{wd, home, host} {
		if len(s) > 1 && strings.Contains(clean, s) {
			t.Errorf("docs flags output contains the machine's %q", s)
		}
	}

	var c Config
	var l configLists
	e := declareConfig("serve", &c, &l, nil)
	documented := map[string]int{}
	for _, s := range e.sections {
		for _, f := range s.Flags {
			documented[f.Name]++
		}
	}
	n := 0
	e.fs.VisitAll(func(f *flag.Flag) {
		n++
		if documented[f.Name] != 1 {
			t.Errorf("--%s documented %d times, want once", f.Name, documented[f.Name])
		}
		if !strings.Contains(clean, "\n### `--"+f.Name+"`\n") {
			t.Errorf("--%s has no section in the page", f.Name)
		}
	})
	if n != len(documented) {
		t.Errorf("%d flags in the flag set, %d documented", n, len(documented))
	}
}

// TestConfigurationDocsEnvOnly: the variables that have no flag each have a
// section on the page, linked from its contents, and none is a flag's
// variable too.
func TestConfigurationDocsEnvOnly(t *testing.T) {
	page := flagsMarkdown()
	if !strings.Contains(page, "\n- [Environment only](#environment-only)\n") || !strings.Contains(page, "\n## Environment only\n") {
		t.Error("no Environment only section in the contents and the page")
	}
	var c Config
	var l configLists
	e := declareConfig("serve", &c, &l, nil)
	flagEnv := map[string]string{}
	for _, s := range e.sections {
		for _, f := range s.Flags {
			flagEnv[f.Env] = f.Name
		}
	}
	for _, want := range []string{"CHDB_LIB_PATH", "GOMEMLIMIT"} {
		if !strings.Contains(page, "\n### `"+want+"`\n") {
			t.Errorf("%s has no section in the page", want)
		}
	}
	for _, v := range envOnly {
		if f, ok := flagEnv[v.Name]; ok {
			t.Errorf("%s is listed as environment only but is --%s's variable", v.Name, f)
		}
	}
}

// TestDocsCommand: `viewcount docs flags` prints the page; anything else is
// a usage error.
func TestDocsCommand(t *testing.T) {
	var out, errw bytes.Buffer
	if err := Run([]string{"docs", "flags"}, &out, &errw); err != nil || out.String() != flagsMarkdown() {
		t.Fatalf("docs flags: %v, %d bytes", err, out.Len())
	}
	if err := Run([]string{"docs", "nope"}, &out, &errw); err == nil {
		t.Fatal("docs nope: no error")
	}
}

// TestFlagUsageDefaults: a usage that names the built-in default it stands
// for when 0 is given is only on a flag whose default is 0, and the
// partition count a new stream gets is the one the stream code uses.
func TestFlagUsageDefaults(t *testing.T) {
	var c Config
	var l configLists
	e := declareConfig("serve", &c, &l, nil)
	for _, s := range e.sections {
		for _, f := range s.Flags {
			if strings.Contains(f.Usage, "0 = default") && f.Default != "0" && f.Default != "0s" {
				t.Errorf("--%s: usage says what 0 means, but its default is %s: %q", f.Name, f.Default, f.Usage)
			}
			if want := fmt.Sprintf("%d on the embedded server, %d on a NATS cluster", viewcount.EmbeddedPartitions, viewcount.DefaultPartitions); f.Name == "partitions" && !strings.Contains(f.Usage, want) {
				t.Errorf("--partitions usage %q", f.Usage)
			}
		}
	}
}

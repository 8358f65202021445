package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/viewcount/viewcount/validate/uaeval"
)

// uaEvalData lays the uaeval fixture out under the pinned sets' file names.
func uaEvalData(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	pinned := uaeval.Pinned()
	for i, src := range []string{"bots.json", "humans.json", "random.json", "top.json", "random.json", "uap.yaml", "uap.yaml"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "validate", "uaeval", "testdata", src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, pinned[i].File), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// squeeze collapses runs of spaces, so rows compare without the table's
// padding.
func squeeze(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	return strings.Join(lines, "\n")
}

func TestUAEvalCommand(t *testing.T) {
	dir := uaEvalData(t)
	patterns := filepath.Join(t.TempDir(), "bots.txt")
	if err := os.WriteFile(patterns, []byte("# in-app browsers are people; this list is wrong\nInstagram \\d\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := func(args []string, want ...string) {
		t.Helper()
		var out, errb bytes.Buffer
		if err := run(append([]string{"ua-eval", "--data", dir}, args...), &out, &errb); err != nil {
			t.Fatalf("ua-eval %q: %v (%s)", args, err, errb.String())
		}
		got := squeeze(out.String())
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("ua-eval %q: output lacks %q:\n%s", args, w, out.String())
			}
		}
	}
	f(nil,
		"crawler-user-agents@1.60.0 bots 18 17 recall 94.44 % 66.67 % bot_ua 11, header_mismatch 5, empty_ua 1\n",
		"\nuser-agents@2.1.198 humans 11 0 false positives (traffic-weighted) 0.000 % 0.000 %\n",
		"\nrandom-useragent@0.5.0 bots bots 3 3 recall 100.00 % 100.00 % bot_ua 3\n",
		"\ntop-user-agents@2.1.138 humans 3 0 false positives (per UA) 0.000 % 0.000 %\n",
		"\nrandom-useragent@0.5.0 legacy browsers humans 3 0 false positives (per UA) 0.000 % 0.000 %\n",
		// uap-core's "Other" family (no device named) is in neither set.
		"\nuap-core@0.16.0 devices humans 2 0 false positives (per UA) 0.000 % 0.000 %\n",
		"\nuap-core@0.16.0 spiders bots 1 1 recall 100.00 % 100.00 % bot_ua 1\n",
		"\nin-app user-agents@2.1.198 3 0 0.000 %\n",
		"crawler-user-agents@1.60.0: bot user agents counted as views (the first 1):\n[browser-automation] Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Electron/33.2.0 Safari/537.36\n\nuser-agents@2.1.198: no human user agents rejected\n",
	)
	f([]string{"--bot-list", patterns, "--misses", "1"},
		"\nuser-agents@2.1.198 humans 11 2 false positives (traffic-weighted) 4.688 % 4.688 % bot_ua 2\n",
		"\nmobile 6 2 10.000 %\n",
		"(the first 1):\n[browser-automation] Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Electron/33.2.0 Safari/537.36\n\n",
	)
	// Only the list decides: the built-in lists no longer reject bots.
	f([]string{"--bot-list", patterns, "--bot-list-replace"},
		"crawler-user-agents@1.60.0 bots 18 1 recall 5.56 % 5.56 % empty_ua 1\n",
	)
	// The same from the variables the usage names.
	t.Setenv("VIEWCOUNT_BOT_LIST", patterns)
	t.Setenv("VIEWCOUNT_BOT_LIST_REPLACE", "true")
	t.Setenv("VIEWCOUNT_UAEVAL_MISSES", "1")
	f(nil,
		"crawler-user-agents@1.60.0 bots 18 1 recall 5.56 % 5.56 % empty_ua 1\n",
		"bot user agents counted as views (the first 1):\n",
	)
	// A flag still wins over its variable.
	f([]string{"--bot-list-replace=false"},
		"\nuser-agents@2.1.198 humans 11 2 false positives (traffic-weighted) 4.688 % 4.688 % bot_ua 2\n",
	)
}

func TestUAEvalCommandErrors(t *testing.T) {
	dir := uaEvalData(t)
	f := func(args []string, want string) {
		t.Helper()
		var out, errb bytes.Buffer
		err := run(append([]string{"ua-eval"}, args...), &out, &errb)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ua-eval %q: error %v, want one containing %q", args, err, want)
		}
	}
	f([]string{"--data", t.TempDir()}, "run `make uadata`")
	f([]string{"--data", dir, "--misses", "-1"}, "--misses -1: must not be negative")
	f([]string{"--data", dir, "extra"}, `unexpected argument "extra"`)
	f([]string{"--data", dir, "--bot-list", filepath.Join(dir, "none.txt")}, "bot patterns")
	t.Setenv("VIEWCOUNT_UAEVAL_MISSES", "many")
	f([]string{"--data", dir}, `VIEWCOUNT_UAEVAL_MISSES="many": want a whole number`)
	t.Setenv("VIEWCOUNT_BOT_LIST_REPLACE", "maybe")
	f([]string{"--data", dir}, `VIEWCOUNT_BOT_LIST_REPLACE="maybe": want true or false`)
}

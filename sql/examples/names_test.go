package examples

import (
	"strings"
	"testing"
)

func TestExamples(t *testing.T) {
	names := Names()
	if len(names) < 2 {
		t.Fatalf("Names() = %q", names)
	}
	for _, name := range names {
		text, ok := Text(name)
		if !ok || !strings.HasPrefix(text, "--") {
			t.Errorf("example %s has no comment header", name)
		}
	}
	if _, ok := Text("nope"); ok {
		t.Error("Text(nope) found")
	}
}

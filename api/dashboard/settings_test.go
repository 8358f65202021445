package dashboard

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/viewcount/viewcount"
)

// TestEngagedAfterChoices: the public count panel offers exactly the
// engaged_after values the API accepts (viewcount.CheckEngagedAfter: the
// engaged-time histogram's bounds but 0).
func TestEngagedAfterChoices(t *testing.T) {
	b, err := assets.ReadFile("assets/app.js")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)const ENGAGED_AFTER = \[([^\]]*)\]`).FindSubmatch(b)
	if m == nil {
		t.Fatal("app.js has no ENGAGED_AFTER list")
	}
	var got []int
	for _, f := range strings.Split(string(m[1]), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			t.Fatalf("ENGAGED_AFTER: %q: %v", f, err)
		}
		if viewcount.CheckEngagedAfter(n) != nil {
			t.Errorf("ENGAGED_AFTER offers %d, which the API refuses", n)
		}
		got = append(got, n)
	}
	if want := len(viewcount.EngagedBuckets) - 1; len(got) != want {
		t.Errorf("ENGAGED_AFTER offers %d values, want the %d the API accepts", len(got), want)
	}
}

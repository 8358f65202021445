package validate

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/validate/judge"
)

// TestExplainStored: a validator judges a small stream into the real
// store; each stored event is then explained with its stored verdict, and
// the rules that depend on earlier views say what views_raw holds: the
// reload's earlier view of the page, the retry's earlier event.
func TestExplainStored(t *testing.T) {
	const ua = "Mozilla/5.0 (X11; Linux x86_64; rv:145.0) Gecko/20100101 Firefox/145.0"
	at := func(s int) time.Time { return trafficStart.Add(time.Duration(s) * time.Second) }
	ev := func(id string, s int, visitor uint64, page, ua string) viewcount.Event {
		return viewcount.Event{Time: at(s), Site: "a.example", Page: page, UA: ua, ID: id, Visitor: visitor, Network: visitor,
			Source: viewcount.SourcePixel, Headers: browserRequest}
	}
	evs := []viewcount.Event{
		ev("first", 0, 7, "/x", ua),
		ev("reload", 30, 7, "/x", ua),
		ev("first", 61, 7, "/x", ua), // a retry of the first
		ev("tool", 62, 9, "/x", "curl/8.5.0"),
	}
	p := newPipeline(t, evs)
	p.validateWith(t, judge.DefaultConfig(), len(evs))
	r, err := judge.NewRules(judge.DefaultConfig(), p.sites)
	if err != nil {
		t.Fatal(err)
	}
	explain := func(id string) []StoredExplanation {
		t.Helper()
		xs, err := ExplainStored(context.Background(), p.store, r, "a.example", id)
		if err != nil {
			t.Fatal(err)
		}
		return xs
	}
	step := func(x StoredExplanation, rule viewcount.Reason) judge.Step {
		t.Helper()
		for _, s := range x.Steps {
			if s.Rule == rule {
				return s
			}
		}
		t.Fatalf("no step for %s", rule)
		return judge.Step{}
	}

	first := explain("first")
	if len(first) != 2 || first[0].Stored != viewcount.Valid || first[1].Stored != viewcount.DuplicateID {
		t.Fatalf("explain first: %+v", first)
	}
	if s := step(first[1], viewcount.DuplicateID); s.Decision != judge.Rejects || !strings.Contains(s.Evidence, "1 earlier event(s) with this id") ||
		!strings.Contains(s.Evidence, "the stored verdict") {
		t.Errorf("the retry's duplicate_id step: %+v", s)
	}
	if s := step(first[0], viewcount.DuplicateID); s.Decision != judge.Stateful || !strings.Contains(s.Evidence, "0 earlier event(s)") {
		t.Errorf("the first's duplicate_id step: %+v", s)
	}
	if first[0].Event.Page != "/x" || first[0].Event.UA != ua || first[0].StoredRules == "" || first[0].StoredIsOlder {
		t.Errorf("the first's facts: %+v", first[0])
	}

	reload := explain("reload")
	if len(reload) != 1 || reload[0].Stored != viewcount.Duplicate {
		t.Fatalf("explain reload: %+v", reload)
	}
	s := step(reload[0], viewcount.Duplicate)
	if s.Decision != judge.Rejects || !strings.Contains(s.Evidence, "1 earlier view(s) of this page by this visitor") ||
		!strings.Contains(s.Evidence, "the last at "+at(0).Format(time.RFC3339Nano)) {
		t.Errorf("the reload's duplicate step: %+v", s)
	}
	if h := reload[0].History; h.VisitorViews != 1 || h.EarlierPage != 1 || h.NetworkUAs != 1 {
		t.Errorf("the reload's history: %+v", h)
	}

	tool := explain("tool")
	if len(tool) != 1 || tool[0].Stored != viewcount.BotUA || tool[0].Verdict != viewcount.BotUA ||
		!strings.Contains(step(tool[0], viewcount.BotUA).Evidence, `"curl/"`) {
		t.Errorf("explain tool: %+v", tool)
	}
	if len(explain("nothing")) != 0 {
		t.Error("an unknown id explained")
	}
}

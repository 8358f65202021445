package loadgen

import (
	"math"
	"testing"

	"github.com/viewcount/viewcount"
)

func TestTallyScore(t *testing.T) {
	var a, b Tally
	for range 90 {
		a.Add(&Hit{Class: Human})
	}
	a.Add(&Hit{Class: Human, Retry: true})
	for range 10 {
		b.Add(&Hit{Class: Bot})
	}
	for range 5 {
		b.Add(&Hit{Class: Flood})
	}
	var tl Tally
	tl.Merge(&a)
	tl.Merge(&b)
	if tl.Total() != 106 || tl.Sent[Human] != 91 || tl.Retries[Human] != 1 {
		t.Fatalf("tally %+v", tl)
	}
	s := tl.Score(map[Class]map[viewcount.Reason]int64{
		Human: {viewcount.Valid: 85, viewcount.DuplicateID: 1, viewcount.Rate: 5},
		Bot:   {viewcount.BotUA: 9, viewcount.Valid: 1},
		Flood: {viewcount.Rate: 2, viewcount.Valid: 3},
	})
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("precision", s.Precision, 85.0/89)
	near("recall", s.Recall, 85.0/90)
	near("human valid share", s.Classes[Human].ValidShare, 85.0/91)
	near("flood valid share", s.Classes[Flood].ValidShare, 3.0/5)
	if s.Missing != 0 || s.Classes[Human].WantValid != 90 || s.Classes[Bot].WantValid != 0 {
		t.Errorf("score %+v", s)
	}
	if _, ok := s.Classes[Farm]; ok {
		t.Error("a class never sent is scored")
	}
}

package loadgen

import (
	"github.com/viewcount/viewcount"
)

// Tally counts the hits sent (acknowledged by the server) by class, so that
// the verdicts later read back from the store (joined by ClassOf on the
// event id) can be scored. The zero value is ready; it is not safe for
// concurrent use (keep one per worker and Merge them).
type Tally struct {
	Sent    map[Class]int64 `json:"sent"`    // every hit, retries included
	Retries map[Class]int64 `json:"retries"` // of which exact re-sends
}

// Add counts one hit.
func (t *Tally) Add(h *Hit) {
	t.init()
	t.Sent[h.Class]++
	if h.Retry {
		t.Retries[h.Class]++
	}
}

// Merge adds o's counts to t.
func (t *Tally) Merge(o *Tally) {
	t.init()
	for c, n := range o.Sent {
		t.Sent[c] += n
	}
	for c, n := range o.Retries {
		t.Retries[c] += n
	}
}

func (t *Tally) init() {
	if t.Sent == nil {
		t.Sent, t.Retries = make(map[Class]int64), make(map[Class]int64)
	}
}

// Total is the number of hits counted.
func (t *Tally) Total() int64 {
	var n int64
	for _, x := range t.Sent {
		n += x
	}
	return n
}

// ClassScore is how one class fared.
type ClassScore struct {
	Sent       int64                      `json:"sent"`
	WantValid  int64                      `json:"want_valid"` // first sends of a valid class
	Valid      int64                      `json:"valid"`      // observed as valid
	ValidShare float64                    `json:"valid_share"`
	Verdicts   map[viewcount.Reason]int64 `json:"verdicts"`
}

// Score is filtering quality: precision is the share of counted views that
// are human first views, recall the share of human first views counted.
type Score struct {
	Classes   map[Class]ClassScore `json:"classes"`
	Precision float64              `json:"precision"`
	Recall    float64              `json:"recall"`
	// Missing is how many sent hits have no observed verdict (not yet
	// inserted, or lost).
	Missing int64 `json:"missing"`
}

// Score rates observed verdicts, counted by class (ClassOf of the stored
// event id) and reason, against what was sent.
func (t *Tally) Score(observed map[Class]map[viewcount.Reason]int64) Score {
	s := Score{Classes: make(map[Class]ClassScore)}
	var counted, truePos, wantValid int64
	for _, c := range Classes {
		cs := ClassScore{Sent: t.Sent[c], Verdicts: make(map[viewcount.Reason]int64)}
		if c.Valid() {
			cs.WantValid = t.Sent[c] - t.Retries[c]
		}
		var seen int64
		for r, n := range observed[c] {
			cs.Verdicts[r] = n
			seen += n
		}
		cs.Valid = observed[c][viewcount.Valid]
		if cs.Sent > 0 {
			cs.ValidShare = float64(cs.Valid) / float64(cs.Sent)
		}
		s.Missing += max(cs.Sent-seen, 0)
		counted += cs.Valid
		// A class's valid verdicts beyond its first sends are retries
		// counted twice: false positives like any invalid view.
		truePos += min(cs.Valid, cs.WantValid)
		wantValid += cs.WantValid
		if cs.Sent > 0 || seen > 0 {
			s.Classes[c] = cs
		}
	}
	if counted > 0 {
		s.Precision = float64(truePos) / float64(counted)
	}
	if wantValid > 0 {
		s.Recall = float64(truePos) / float64(wantValid)
	}
	return s
}

package validate

// window remembers 64-bit keys with the event time (Unix milliseconds) they
// were last seen at, for one rule's window. It is a short list of generation
// maps, oldest first, rather than one map, for two reasons:
//
//   - Go maps never shrink. Dropping a whole generation gives its memory back;
//     deleting entries from one long-lived map would not.
//   - Under a flood of distinct keys the hard cap is enforced by dropping the
//     oldest generation early, which loses the least useful keys first and
//     costs nothing per key.
//
// Generations are aligned to absolute time (bucket = now / span) and a new
// one is also started when the newest holds maxKeys/gensPerWindow keys, so a
// burst inside one span cannot put every key into the generation that would
// have to be dropped. Everything here is a function of the calls made, never
// of the wall clock or of map iteration order, so replays rebuild it exactly.
//
// A window is not safe for concurrent use.
type window struct {
	width   int64 // the rule's window, ms
	span    int64 // time covered by one generation, ms
	maxKeys int   // hard cap on entries over all generations
	perGen  int   // size at which the newest generation is closed early
	gens    []generation
	n       int // entries over all generations (a refreshed key may sit in two)
}

type generation struct {
	bucket int64            // now / span when the generation was opened
	end    int64            // the latest time stored in it
	keys   map[uint64]int64 // key → time last seen, ms
}

// gensPerWindow trades lookup cost against eviction granularity: a miss (the
// common case: a new visitor or event id) probes every live generation, about
// gensPerWindow+1 map lookups, and hitting the cap drops about
// 1/gensPerWindow of the remembered keys at once.
const gensPerWindow = 4

func newWindow(width int64, maxKeys int) window {
	return window{
		width:   width,
		span:    max(1, (width+gensPerWindow-1)/gensPerWindow),
		maxKeys: maxKeys,
		perGen:  max(1, maxKeys/gensPerWindow),
	}
}

// seen reports whether key was last seen less than the window before now,
// and records that it was seen at t. now is the latest event time the rules
// have seen (t itself unless t arrived late); measuring age from now rather
// than t makes a key's liveness independent of where generation boundaries
// fell, so a replay that starts later still gives the same answers.
//
// Every call refreshes the key: the window slides with the last sighting, so
// a key stays remembered for as long as it keeps coming back more often than
// the window. A late t older than the stored time does not move it back.
func (w *window) seen(key uint64, t, now int64) bool {
	last, ok := w.lookup(key)
	if !ok || t > last {
		w.add(key, t, now)
	}
	return ok && now-last < w.width
}

// lookup returns the latest time key was stored at. The newest generation
// is probed first and always holds a key's latest time, so the first hit wins.
func (w *window) lookup(key uint64) (int64, bool) {
	for i := len(w.gens) - 1; i >= 0; i-- {
		if t, ok := w.gens[i].keys[key]; ok {
			return t, true
		}
	}
	return 0, false
}

func (w *window) add(key uint64, t, now int64) {
	bucket := floorDiv(now, w.span)
	if g := w.newest(); g != nil && g.bucket == bucket {
		if _, ok := g.keys[key]; ok { // a refresh in place adds no entry
			g.keys[key] = t
			g.end = max(g.end, t)
			return
		}
	}
	// Make room first, so the cap holds after the insert. Beyond the cap the
	// oldest keys are forgotten before their window ends: a duplicate of one
	// of them is then counted. That is the price of bounded memory under any
	// key cardinality (the design's invariant 5).
	for w.n >= w.maxKeys && len(w.gens) > 0 {
		w.dropOldest()
	}
	g := w.newest()
	if g == nil || g.bucket != bucket || len(g.keys) >= w.perGen {
		w.gens = append(w.gens, generation{bucket: bucket, end: t, keys: make(map[uint64]int64)})
		g = w.newest()
	}
	g.keys[key] = t
	g.end = max(g.end, t)
	w.n++
}

// expire drops the generations whose every key is older than the window at
// now; they can no longer make anything a duplicate.
func (w *window) expire(now int64) {
	for len(w.gens) > 0 && now-w.gens[0].end >= w.width {
		w.dropOldest()
	}
}

func (w *window) dropOldest() {
	w.n -= len(w.gens[0].keys)
	copy(w.gens, w.gens[1:])
	w.gens[len(w.gens)-1] = generation{} // let the map be collected
	w.gens = w.gens[:len(w.gens)-1]
}

func (w *window) newest() *generation {
	if len(w.gens) == 0 {
		return nil
	}
	return &w.gens[len(w.gens)-1]
}

func (w *window) reset() {
	clear(w.gens)
	w.gens = w.gens[:0]
	w.n = 0
}

// floorDiv rounds towards minus infinity, so buckets stay aligned for times
// before 1970 too (a zero time.Time is year 1).
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && (a < 0) {
		q--
	}
	return q
}

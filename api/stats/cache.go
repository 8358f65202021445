package stats

import (
	"container/list"
	"maps"
	"net/url"
	"strings"
	"sync"
	"time"
)

// answerCache keeps encoded answers, least recently used first out, within
// a byte budget. A dashboard asks the same handful of calls on every load
// and every refresh, and several people may watch one share link: most
// calls repeat one asked seconds ago, and reading the rollups again costs
// tens of milliseconds of sketch merging each time.
//
// An answer is kept until its deadline: a range that ended before the
// counts settle (see settled) never changes, so it is kept until evicted;
// any other for the answers' max-age (the Cache-Control the API sends), so
// a cached answer is never staler than a client may already hold it. The
// answer's as_of stays the time it was read.
type answerCache struct {
	ttl    time.Duration
	budget int64

	mu    sync.Mutex
	size  int64
	order *list.List // of *cacheEntry, most recently used first
	byKey map[string]*list.Element
}

type cacheEntry struct {
	key     string
	ans     *answer
	size    int64
	expires time.Time // zero: until evicted
}

// settleAfter is how long after a range's end its counts may still change
// beyond the pipeline's lag: events are stamped when ingest receives them
// and reach the rollups a lag later; the margin covers a validator's retry
// and a batch held across a restart.
const settleAfter = 10 * time.Minute

func newAnswerCache(budget int64, ttl time.Duration) *answerCache {
	return &answerCache{budget: budget, ttl: ttl, order: list.New(), byKey: map[string]*list.Element{}}
}

// cacheKey names an answer by route, site, zone, the site's engaged_after
// and every query parameter but the format (one answer serves JSON and
// CSV), in a canonical order: everything an answer depends on but the
// store's rows.
func cacheKey(route, site, zone string, engagedAfter time.Duration, q url.Values) string {
	q = maps.Clone(q)
	q.Del("format")
	var b strings.Builder
	b.WriteString(route)
	b.WriteByte(0)
	b.WriteString(site)
	b.WriteByte(0)
	b.WriteString(zone)
	b.WriteByte(0)
	b.WriteString(engagedAfter.String())
	b.WriteByte(0)
	b.WriteString(q.Encode()) // sorted by key
	return b.String()
}

func (c *answerCache) get(key string, now time.Time) (*answer, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cacheEntry)
	if !e.expires.IsZero() && !now.Before(e.expires) {
		c.remove(el)
		return nil, false
	}
	c.order.MoveToFront(el)
	return e.ans, true
}

// put keeps ans; settled says its range will not change any more. An
// answer larger than a quarter of the budget is not kept: it would evict
// many small ones to be asked rarely (a 1000-row breakdown page).
func (c *answerCache) put(key string, ans *answer, settled bool, now time.Time) {
	size := int64(len(key)) + ans.size()
	if size > c.budget/4 {
		return
	}
	e := &cacheEntry{key: key, ans: ans, size: size}
	if !settled {
		e.expires = now.Add(c.ttl)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.remove(el)
	}
	c.byKey[key] = c.order.PushFront(e)
	c.size += size
	for c.size > c.budget {
		c.remove(c.order.Back())
	}
}

func (c *answerCache) remove(el *list.Element) {
	e := c.order.Remove(el).(*cacheEntry)
	delete(c.byKey, e.key)
	c.size -= e.size
}

// size is about what ans holds in memory: its encoded JSON and its CSV
// cells, each with a string header.
func (ans *answer) size() int64 {
	n := int64(len(ans.encoded)) + 64
	for _, r := range ans.header {
		n += int64(len(r)) + 16
	}
	for _, r := range ans.rows {
		n += 24
		for _, cell := range r {
			n += int64(len(cell)) + 16
		}
	}
	return n
}

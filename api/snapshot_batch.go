package api

import (
	"context"
	"strings"
)

// getMany returns the readings of pages of site (none of them "", the whole
// site), index-aligned with pages. Fresh readings come from the snapshot as
// get's do; the pages it lacks, or holds stale, are fetched with ONE store
// query for the batch, never one per page, and stored with one as_of.
// Concurrent requests for the same missing pages (visitors of one listing
// page) share that query. The readings must not be modified.
func (s *Snapshot) getMany(ctx context.Context, site string, pages []string) ([]*reading, error) {
	out := make([]*reading, len(pages))
	now := s.now()
	var missing []string
	var old map[string]*reading // stale readings, served if the store is out
	s.mu.RLock()
	for i, p := range pages {
		if e := s.entries[key{site, p}]; e != nil {
			e.lastRead.Store(now.UnixNano())
			if r := e.count.Load(); r != nil {
				if now.Sub(r.AsOf) <= s.stale {
					if !e.readAgain.Load() {
						e.readAgain.Store(true)
					}
					out[i] = r
					continue
				}
				if old == nil {
					old = map[string]*reading{}
				}
				old[p] = r
			}
		}
		missing = append(missing, p)
	}
	s.mu.RUnlock()
	if len(missing) == 0 {
		return out, nil
	}
	missing = distinct(missing)
	// \x01 cannot start a site name, so no batch shares a key with get's.
	v, err, _ := s.group.Do("\x01"+site+"\x00"+strings.Join(missing, "\x00"), func() (any, error) {
		counts, err := s.fetchMany(ctx, site, missing)
		if err != nil {
			return nil, err
		}
		got := make(map[string]*reading, len(missing))
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, p := range missing {
			got[p] = s.storeLocked(key{site, p}, counts[p])
		}
		return got, nil
	})
	got, _ := v.(map[string]*reading)
	for i, r := range out {
		if r != nil {
			continue
		}
		if out[i] = got[pages[i]]; out[i] == nil {
			if out[i] = old[pages[i]]; out[i] == nil {
				return nil, err // the store is out and this page was never read
			}
		}
	}
	return out, nil
}

// distinct returns pages without repeats, in their first order.
func distinct(pages []string) []string {
	seen := make(map[string]struct{}, len(pages))
	out := pages[:0:0]
	for _, p := range pages {
		if _, ok := seen[p]; !ok {
			seen[p] = struct{}{}
			out = append(out, p)
		}
	}
	return out
}

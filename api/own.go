package api

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/viewcount/viewcount"
)

// A reader's own views: a page showing its count includes the view it has
// just sent, as a site shows a reader's own like at once, and never counts
// it twice. The reader passes back where the beacon said the view is in
// the stream (viewcount.StreamPosition); nothing reaches the rollups but by
// a feed (feed.FedThrough), so feed progress read before a count's query
// began says the count holds the view, and progress read after it
// answered, short of the view, says the count lacks it. A view fed in
// between (or whose feed the progress read before cannot place) leaves the
// count in doubt: it is read again, after that progress read, and holds
// the view. Whether the view will count at all (a reload is the same
// visitor's duplicate) only the reader can know: vc.js passes the first
// view of the page it sent that day, and it is taken as valid.
//
// So a count with its own view is never one over, and one short only when
// feed progress or the re-read fails (the store's trouble shows in
// readiness). A re-read needs a view fed since the reading began, so a
// page is read again at most once per feed, whatever readers send.

// maxOwnViews bounds a request's own views: vc.js sends one, of the page
// it is on.
const maxOwnViews = 10

// FedFunc returns each partition's feed progress: the highest stream
// sequence the feeds have reached, none above it being in the rollups
// (feed.FedThrough). A partition never fed is absent.
type FedFunc func(ctx context.Context) (map[int]uint64, error)

// TrackFeeds lets the snapshot tell, with f, whether a count lacks a
// reader's own view. Without it no count is known to lack one.
func (s *Snapshot) TrackFeeds(f FedFunc) { s.fedFunc = f }

// fedState is feed progress and the read counter before it was read
// (after: it bounds every reading done before then) and once it was
// (complete: it precedes every reading begun after then).
type fedState struct {
	through  map[int]uint64
	after    uint64
	complete uint64
}

// covers reports whether f had fed any of the views at pos.
func (f *fedState) covers(pos []viewcount.StreamPosition) bool {
	if f == nil {
		return false
	}
	for _, p := range pos {
		if through, ok := f.through[p.Partition]; ok && p.Seq <= through {
			return true
		}
	}
	return false
}

// ownView is one of a reader's own views: the page it viewed and where
// the beacon said the view is.
type ownView struct {
	page string
	pos  viewcount.StreamPosition
}

// ownJSON is an own view as a client sends it (the counts POST's "own").
type ownJSON struct {
	Page     string `json:"page"`
	Position string `json:"position"`
}

var errOwnBody = errBadRequest(`own: want [{"page":"/a","position":"2:18446"}], the position as the beacon answered`)

// ownViews checks and normalises a body's own views: at most maxOwnViews,
// each a page as a count's page and a position as the beacon answers it.
func (s *Server) ownViews(in []ownJSON) ([]ownView, error) {
	if len(in) > maxOwnViews {
		return nil, errBadRequest("own: at most " + strconv.Itoa(maxOwnViews) + " views, got " + strconv.Itoa(len(in)))
	}
	out := make([]ownView, len(in))
	for i, v := range in {
		field := "own[" + strconv.Itoa(i) + "]."
		page, err := s.readPage(v.Page)
		if err != nil {
			return nil, errBadRequest(field + err.Error())
		}
		pos, err := viewcount.ParseStreamPosition(v.Position)
		if err != nil {
			return nil, errBadRequest(field + "position: " + err.Error())
		}
		out[i] = ownView{page: page, pos: pos}
	}
	return out, nil
}

// isOwnError reports whether a body's JSON error is in its own views.
func isOwnError(err error) bool {
	var te *json.UnmarshalTypeError
	return errors.As(err, &te) && (te.Field == "own" || strings.HasPrefix(te.Field, "own."))
}

// ownOf returns the reading of site+page to serve with the reader's own
// views (own), and 1 when they are all certain to be missing from it, 0
// otherwise, or when there are none: a reader's views of one page count
// once at most (the rest are its duplicates), and a view the reading may
// hold is never added. r is the reading getMany served; it is read again
// when a view was fed while it may have been read.
func (s *Snapshot) ownOf(ctx context.Context, own []ownView, site, page string, r *reading) (*reading, uint64) {
	var mine []viewcount.StreamPosition
	for _, v := range own {
		if v.page == page {
			mine = append(mine, v.pos)
		}
	}
	if len(mine) == 0 {
		return r, 0
	}
	// Twice at most: a re-read joined the first time may have begun
	// before the progress read that placed the view.
	for range 2 {
		if r.before.covers(mine) {
			return r, 0 // fed before r's query began: r holds it
		}
		f := s.fedAfter(ctx, r.done)
		if f == nil {
			return r, 0
		}
		if !f.covers(mine) {
			return r, 1 // not fed when r had been read: r lacks it
		}
		nr, err := s.fetchShared(ctx, key{site, page})
		if err != nil {
			return r, 0 // one short, as without progress
		}
		if r = nr; r.begin > f.complete {
			return r, 0 // begun after f, which had fed it
		}
	}
	return r, 0
}

// fedAfter returns feed progress read after the reading done, from the
// last one read if it is that recent, or read now (shared by concurrent
// callers); nil when it cannot be read, or without TrackFeeds.
func (s *Snapshot) fedAfter(ctx context.Context, done uint64) *fedState {
	if s.fedFunc == nil {
		return nil
	}
	// Twice at most: a read joined the first time may have begun before
	// done; one begun after the first returned began after done.
	for range 2 {
		if f := s.fed.Load(); f != nil && f.after > done {
			return f
		}
		// \x02 starts no site name: no count shares the key.
		v, err, _ := s.group.Do("\x02fed", func() (any, error) {
			f := &fedState{after: s.reads.Add(1)}
			var err error
			if f.through, err = s.fedFunc(ctx); err != nil {
				return nil, err
			}
			f.complete = s.reads.Add(1)
			for {
				old := s.fed.Load()
				if old != nil && old.after > f.after {
					return old, nil
				}
				if s.fed.CompareAndSwap(old, f) {
					return f, nil
				}
			}
		})
		if err != nil {
			// The count is served without the own view: one short, and
			// the store's trouble shows in readiness.
			return nil
		}
		if f := v.(*fedState); f.after > done {
			return f
		}
	}
	return nil
}

package api

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/feed"
)

// A reader's own views: a page showing its count includes the view it has
// just sent, as a site shows a reader's own like at once, and never counts
// it twice. The reader passes back where the beacon said the view is in
// the stream (viewcount.StreamPosition), and nothing reaches the rollups
// but by a feed, recorded before it runs and again once it has
// (feed.FedThrough): so a count read after its partition's feeds were done
// past the view holds it, and one read before they reached it lacks it.
// A count that may have been read either side (the view fed meanwhile) is
// read again, after a progress read that found the feed done; while the
// view's feed runs, the answer waits for it (ownWait at most). Whether
// the view will count at all (a reload is the same visitor's duplicate)
// only the reader can know: vc.js passes the first view of the page it
// sent that day, and it is taken as valid.
//
// So a count with its own view is never one over, and one short only when
// feed progress or the re-read fails (the store's trouble shows in
// readiness), a feed runs longer than ownWait, or the view is held for
// settling (stored by a later batch than its sequence says). A re-read
// needs a view fed since the reading began, so a page is read again at
// most once per feed, whatever readers send.

// maxOwnViews bounds a request's own views: vc.js sends one, of the page
// it is on.
const maxOwnViews = 10

// ownWait bounds how long an answer waits for the feed of a reader's own
// view to return: longer than a feed runs (its fixed cost per run is in
// docs/architecture.md, "How it works"), and no longer than a page's
// counts are worth holding a reader for (docs/counts.md, "Never one
// over").
const ownWait = 2 * time.Second

// FedFunc returns each partition's feed progress (feed.FedThrough): how
// far the feeds have reached, none above it being in the rollups, and how
// far they were done, all up to it being in them. A partition never fed
// is absent.
type FedFunc func(ctx context.Context) (map[int]feed.Fed, error)

// TrackFeeds lets the snapshot tell, with f, whether a count lacks a
// reader's own view. Without it no count is known to lack one.
func (s *Snapshot) TrackFeeds(f FedFunc) { s.fedFunc = f }

// fedState is feed progress and the read counter before it was read
// (after: it bounds every reading done before then) and once it was
// (complete: it precedes every reading begun after then).
type fedState struct {
	fed      map[int]feed.Fed
	after    uint64
	complete uint64
}

// reached reports whether a feed had reached any of the views at pos.
func (f *fedState) reached(pos []viewcount.StreamPosition) bool {
	for _, p := range pos {
		if p.Seq <= f.fed[p.Partition].Through {
			return true
		}
	}
	return false
}

// done reports whether the feed of any of the views at pos was done.
func (f *fedState) done(pos []viewcount.StreamPosition) bool {
	if f == nil {
		return false
	}
	for _, p := range pos {
		if p.Seq <= f.fed[p.Partition].Done {
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
	// before the progress read that found the view's feed done.
	for range 2 {
		if r.before.done(mine) {
			return r, 0 // done before r's query began: r holds it
		}
		f := s.fedAfter(ctx, r.done)
		if f == nil {
			return r, 0
		}
		if !f.reached(mine) {
			return r, 1 // not reached when r had been read: r lacks it
		}
		if !f.done(mine) {
			if f = s.awaitDone(ctx, mine); f == nil {
				return r, 0
			}
		}
		nr, err := s.fetchShared(ctx, key{site, page})
		if err != nil {
			return r, 0 // one short, as without progress
		}
		if r = nr; r.begin > f.complete {
			return r, 0 // begun after f, which found it done
		}
	}
	return r, 0
}

// awaitDone reads feed progress until the feed of one of the views at pos
// is done, and returns that progress; nil when it is not within ownWait,
// or cannot be read.
func (s *Snapshot) awaitDone(ctx context.Context, pos []viewcount.StreamPosition) *fedState {
	ctx, cancel := context.WithTimeout(ctx, s.ownWait)
	defer cancel()
	pause := 5 * time.Millisecond
	for {
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		// A read begun after every one so far: concurrent waiters share it.
		f := s.fedAfter(ctx, s.reads.Load())
		if f == nil || f.done(pos) {
			return f
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
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
			if f.fed, err = s.fedFunc(ctx); err != nil {
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

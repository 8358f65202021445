package validate

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/validate/judge"
)

// The source a partition is judged again from.
const (
	SourceStream = "stream"
	SourceRaw    = "views_raw"
)

// rejudged is what judging one partition again found for the range's site.
type rejudged struct {
	source string
	judged int // the site's events in the range with a verdict now
	// rewrite are the stored rows that differ from what the judging
	// decided now: in the range, a verdict, the rule set that judged it
	// or its visit columns; after it (up to judge.Rules.VisitReach), the
	// visit columns, and an engagement report's verdict, which follows
	// its view's.
	rewrite []verdict
}

// verdict is one stored row's new verdict and visit columns, with what
// the report needs.
type verdict struct {
	seq      uint64
	idx      uint32
	t        int64 // receive time, Unix ms
	page     string
	old, new viewcount.Reason
	rules    string // written: the new rule set's in the range, the stored one after it
	inRange  bool
	moved    bool // the visit columns differ from the stored ones
	visit    visitCols
	report   *reportHints // an engagement report's borrowed hints; nil on a view
}

type seqIdx struct {
	seq uint64
	idx uint32
}

// visitCols is a verdict's VisitDelta as views_raw's columns hold it
// (sql/store's native encoding: times as Unix ms, 0 for none; buckets -1
// unless the visit stage decided the verdict), so a stored row and a
// recomputed one compare as values.
type visitCols struct {
	set                  bool
	viewMS, startMS      int64
	entryPage, entryHost string
	entrySource          string
	utm                  viewcount.UTM
	prevPage             string
	visits, bounces      int8
	visitMS, engagedMS   int32
	engFrom, engTo       int8
	scrollFrom, scrollTo int8
}

func colsOf(d *viewcount.VisitDelta) visitCols {
	c := visitCols{set: d.Set, entryPage: d.EntryPage, entryHost: d.EntryRefHost, entrySource: d.EntryRefSource,
		utm: d.EntryUTM, prevPage: d.PrevPage, visits: d.Visits, bounces: d.Bounces, visitMS: d.VisitMS, engagedMS: d.EngagedMS,
		engFrom: -1, engTo: -1, scrollFrom: -1, scrollTo: -1}
	if !d.ViewTime.IsZero() {
		c.viewMS = d.ViewTime.UnixMilli()
	}
	if !d.VisitStart.IsZero() {
		c.startMS = d.VisitStart.UnixMilli()
	}
	if d.Set {
		c.engFrom, c.engTo, c.scrollFrom, c.scrollTo = d.EngagedFrom, d.EngagedTo, d.ScrollFrom, d.ScrollTo
	}
	return c
}

// reportHints are the hints an engagement report carries once the visit
// stage lends it its view's (a report has none of its own), and the
// screen class they give it.
type reportHints struct {
	present bool
	w, h    uint16
	screen  string
}

// storedVerdict is what views_raw holds for one event.
type storedVerdict struct {
	reason viewcount.Reason
	kind   viewcount.Kind
	t      int64
	page   string
	rules  string
	visit  visitCols
	hints  reportHints
}

// rejudgePartition judges partition p again with fresh rules, in stream
// order, from the rules' replay start before the range (which only
// rebuilds the rules' and the visit stage's state, as a validator's start
// does) until every event of the range has its verdict and every visit
// row it can change is recomputed: past judge.Rules.VisitReach of its end
// by the settle window, or to the end of the partition. Only the site's
// events from the range on are compared with views_raw. The visit stage
// sees the site's views outside the range with their stored verdicts,
// which the revalidation keeps, so the rows it rewrites are those a
// validator would have written had the range been judged so from the
// start. The stream is read when it still holds that start; else
// views_raw is, in the same order.
func (r *Revalidator) rejudgePartition(ctx context.Context, p int, req viewcount.RevalidateRequest, rs ruleVersion) (rejudged, error) {
	out := rejudged{source: SourceStream}
	rules, err := judge.NewRules(rs.cfg, r.Sites)
	if err != nil {
		return out, err
	}
	start := rules.ReplayStart(req.From).Add(-r.margin())
	reach := rules.VisitReach(req.To.Add(-time.Millisecond))
	stored, before, err := r.stored(ctx, p, req, start, reach)
	if err != nil {
		return out, err
	}
	end := reach.Add(rules.SettleWindow() + r.margin())
	from, to, last := req.From.UnixMilli(), req.To.UnixMilli(), reach.UnixMilli()
	q := holdQueue{window: rules.SettleWindow().Milliseconds(), max: rs.cfg.MaxHeld}
	var buf []viewcount.Verdict
	// keep gives the site's views outside the range their stored verdicts
	// (and rows after it their stored rule set) before the visit stage.
	keep := func(v *viewcount.Verdict) {
		if v.Site != req.Site {
			return
		}
		t, k := v.Time.UnixMilli(), seqIdx{v.Seq, v.Index}
		switch {
		case t < from:
			if reason, ok := before[k]; ok && v.Kind == viewcount.KindView {
				v.Reason = reason
			}
		case t >= to:
			if old, ok := stored[k]; ok {
				if v.Kind == viewcount.KindView {
					v.Reason = old.reason
				}
				v.Rules = old.rules
			}
		}
	}
	// take judges one message and reports whether every row the range
	// can change is decided: the rules' clock (the latest event or tick
	// time) has passed the visit reach by the settle window.
	take := func(seq uint64, evs []viewcount.Event, tick int64, isTick bool) (done bool) {
		if isTick {
			q.observe(tick)
		}
		buf = judgeEvents(rules, &q, rs.version, p, seq, evs, false, keep, buf[:0])
		for i := range buf {
			v := &buf[i]
			t := v.Time.UnixMilli()
			if v.Site != req.Site || t < from || t > last {
				continue
			}
			old, ok := stored[seqIdx{v.Seq, v.Index}]
			if !ok {
				continue // not stored yet: its validator judges it, with the rules it runs
			}
			in := t < to
			if in {
				out.judged++
			}
			nv := verdict{seq: v.Seq, idx: v.Index, t: t, page: old.page, old: old.reason, new: v.Reason,
				rules: v.Rules, inRange: in, visit: colsOf(&v.Visit)}
			nv.moved = nv.visit != old.visit
			changed := nv.moved || in && (old.reason != v.Reason || old.rules != v.Rules)
			if v.Kind == viewcount.KindEngagement {
				nv.report = &reportHints{present: v.Hints.Present, w: v.Hints.ScreenW, h: v.Hints.ScreenH,
					screen: rules.Dims(&v.Event).Screen}
				changed = changed || old.reason != v.Reason || *nv.report != old.hints
			}
			if changed {
				out.rewrite = append(out.rewrite, nv)
			}
		}
		return q.mark > end.UnixMilli()
	}
	retained, err := r.streamHolds(ctx, start)
	if err != nil {
		return out, err
	}
	if !retained {
		out.source = SourceRaw
		if err := r.readRaw(ctx, p, start, end, take); err != nil {
			return out, err
		}
		// Every event views_raw holds was released by its validator, most
		// at a tick views_raw does not keep: views still held at the end
		// are settled now, with what the rules saw up to there.
		take(0, nil, math.MaxInt64, true)
		return out, nil
	}
	return out, r.readStream(ctx, p, start, take)
}

// stored reads what views_raw holds of the site's events of partition p:
// the verdicts of its views from start to the range, which the visit
// stage is fed, and every row from the range's start to reach, which the
// judging is compared with. That is the memory a revalidation holds: a
// few dozen bytes an event before the range, a few hundred from it on.
func (r *Revalidator) stored(ctx context.Context, p int, req viewcount.RevalidateRequest, start, reach time.Time) (map[seqIdx]storedVerdict, map[seqIdx]viewcount.Reason, error) {
	res, err := r.Store.Query(ctx, queries.Text(queries.RevalidateStored), store.Params{"site": req.Site,
		"partition": strconv.Itoa(p), "from": ms(start), "to": ms(reach.Add(time.Millisecond))})
	if err != nil {
		return nil, nil, fmt.Errorf("validate: revalidate partition %d: stored verdicts: %w", p, err)
	}
	from := req.From.UnixMilli()
	out, before := make(map[seqIdx]storedVerdict, res.Len()), map[seqIdx]viewcount.Reason{}
	for res.Next() {
		k, kind := seqIdx{res.Uint64("seq"), res.Uint32("idx")}, viewcount.Kind(res.Uint8("kind"))
		t := res.Int64("t")
		if t < from {
			if kind == viewcount.KindView {
				before[k] = viewcount.Reason(res.String("verdict"))
			}
			continue
		}
		out[k] = storedVerdict{reason: viewcount.Reason(res.String("verdict")), kind: kind, t: t,
			page: res.String("page"), rules: res.String("rules"), visit: storedVisit(res),
			hints: reportHints{present: res.Uint8("hints_present") != 0, w: res.Uint16("screen_w"), h: res.Uint16("screen_h"),
				screen: res.String("screen")}}
	}
	if err := res.Err(); err != nil {
		return nil, nil, fmt.Errorf("validate: revalidate partition %d: stored verdicts: %w", p, err)
	}
	return out, before, nil
}

// storedVisit reads a revalidate_stored row's visit columns.
func storedVisit(res *store.Result) visitCols {
	i8 := func(name string) int8 { return int8(res.Int64(name)) }
	return visitCols{set: res.Uint8("visit_set") != 0, viewMS: res.Int64("view_ms"), startMS: res.Int64("start_ms"),
		entryPage: res.String("entry_page"), entryHost: res.String("entry_ref_host"), entrySource: res.String("entry_ref_source"),
		utm:      viewcount.UTM{Source: res.String("entry_utm_source"), Medium: res.String("entry_utm_medium"), Campaign: res.String("entry_utm_campaign")},
		prevPage: res.String("prev_page"), visits: i8("d_visits"), bounces: i8("d_bounces"),
		visitMS: int32(res.Int64("d_visit_ms")), engagedMS: int32(res.Int64("d_engaged_ms")),
		engFrom: i8("eng_from"), engTo: i8("eng_to"), scrollFrom: i8("scroll_from"), scrollTo: i8("scroll_to")}
}

// streamHolds reports whether the stream still holds every message from
// start on: retention removes whole messages from the front, so it does if
// its oldest is no younger, or if none was ever removed.
func (r *Revalidator) streamHolds(ctx context.Context, start time.Time) (bool, error) {
	s, err := r.JS.Stream(ctx, viewcount.StreamName)
	if err != nil {
		return false, fmt.Errorf("validate: revalidate: %w", err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return false, fmt.Errorf("validate: revalidate: stream info: %w", err)
	}
	// FirstSeq 1: nothing was ever removed, so the stream holds all there
	// was from start on, whenever it began.
	st := info.State
	return st.Msgs > 0 && (st.FirstSeq == 1 || !st.FirstTime.After(start)), nil
}

// readStream feeds take partition p's messages from start until take says
// it is done or the partition's last message (when the read began) is read. start is a stream time: the stream's
// timestamps are receive times, as the events' are, to within the publish.
func (r *Revalidator) readStream(ctx context.Context, p int, start time.Time, take func(uint64, []viewcount.Event, int64, bool) bool) error {
	s, err := r.JS.Stream(ctx, viewcount.StreamName)
	if err != nil {
		return fmt.Errorf("validate: revalidate partition %d: %w", p, err)
	}
	// Read up to the partition's last message as it is now: a read that
	// stalls before it is an error (a consumer lost with its node), never
	// taken for the end.
	last, err := lastSeq(ctx, s, p)
	switch {
	case err != nil:
		return fmt.Errorf("validate: revalidate: %w", err)
	case last == 0:
		return nil
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{viewcount.Subject(p)},
		DeliverPolicy: jetstream.DeliverByStartTimePolicy, OptStartTime: &start})
	if err != nil {
		return fmt.Errorf("validate: revalidate partition %d: consumer: %w", p, err)
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(512))
	if err != nil {
		return fmt.Errorf("validate: revalidate partition %d: consumer: %w", p, err)
	}
	defer it.Stop()
	var evs []viewcount.Event
	for {
		// Longer than the ordered consumer's missed-heartbeat check, so a
		// consumer lost with its node is recreated within one wait.
		nctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		msg, err := it.Next(jetstream.NextContext(nctx))
		cancel()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			return fmt.Errorf("validate: revalidate partition %d: read before seq %d: %w", p, last, err)
		}
		md, err := msg.Metadata()
		if err != nil {
			return fmt.Errorf("validate: revalidate partition %d: metadata: %w", p, err)
		}
		done := false
		if t, ok := tickTime(msg); ok {
			done = take(md.Sequence.Stream, nil, t, true)
		} else if evs, err = viewcount.DecodeEvents(evs[:0], msg.Data()); err != nil {
			r.Logger.Error("undecodable message skipped", "partition", p, "seq", md.Sequence.Stream, "err", err)
		} else {
			done = take(md.Sequence.Stream, evs, 0, false)
		}
		if done || md.Sequence.Stream >= last {
			return nil
		}
	}
}

func ms(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

// rawChunk is how many rows readRaw reads at a time.
const rawChunk = 20000

// readRaw feeds take partition p's events from views_raw between start and
// end, message by message in stream order, until take says it is done. Ticks are not stored: a held
// view is settled when a later event passes its window instead of at the
// tick, which can differ only if events in between changed its settling.
func (r *Revalidator) readRaw(ctx context.Context, p int, start, end time.Time, take func(uint64, []viewcount.Event, int64, bool) bool) error {
	var after uint64
	var evs []viewcount.Event
	for {
		res, err := r.Store.Query(ctx, queries.Text(queries.RevalidateEvents), store.Params{"partition": strconv.Itoa(p),
			"from": ms(start), "to": ms(end), "after": strconv.FormatUint(after, 10), "limit": strconv.Itoa(rawChunk)})
		if err != nil {
			return fmt.Errorf("validate: revalidate partition %d: read views_raw after seq %d: %w", p, after, err)
		}
		// Each row's message first, to find where the messages end.
		seqs := make([]uint64, 0, res.Len())
		for res.Next() {
			seqs = append(seqs, res.Uint64("seq"))
		}
		if err := res.Err(); err != nil {
			return fmt.Errorf("validate: revalidate partition %d: read views_raw after seq %d: %w", p, after, err)
		}
		full := len(seqs) == rawChunk
		if full {
			// The last message may go on past the limit: read it whole next time.
			last := seqs[len(seqs)-1]
			for len(seqs) > 0 && seqs[len(seqs)-1] == last {
				seqs = seqs[:len(seqs)-1]
			}
			if len(seqs) == 0 {
				return fmt.Errorf("validate: revalidate partition %d: message %d has more than %d events", p, last, rawChunk)
			}
		}
		res.Reset()
		for i := 0; i < len(seqs); {
			seq, j := seqs[i], i
			evs = evs[:0]
			for ; j < len(seqs) && seqs[j] == seq; j++ {
				res.Next()
				evs = append(evs, rawEvent(res))
			}
			if err := res.Err(); err != nil {
				return fmt.Errorf("validate: revalidate partition %d seq %d: %w", p, seq, err)
			}
			if take(seq, evs, 0, false) {
				return nil
			}
			after, i = seq, j
		}
		if !full {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// rawEvent rebuilds an event from the current row of revalidate_events
// (or explain_event, which has its columns); a column that does not read
// exactly is res.Err.
func rawEvent(res *store.Result) viewcount.Event {
	var e viewcount.Event
	b := func(name string) bool { return res.Uint64(name) != 0 }
	e.Time = time.UnixMilli(res.Int64("toUnixTimestamp64Milli(time)")).UTC()
	e.Site, e.Page, e.Referrer, e.UA, e.ID = res.String("site"), res.String("page"), res.String("referrer"), res.String("ua"), res.String("event_id")
	e.Visitor, e.Network = res.Uint64("visitor"), res.Uint64("network")
	e.Webdriver, e.Datacenter = b("toUInt8(webdriver)"), b("toUInt8(datacenter)")
	switch res.String("toString(source)") {
	case viewcount.SourcePixel.String():
		e.Source = viewcount.SourcePixel
	case viewcount.SourceBeacon.String():
		e.Source = viewcount.SourceBeacon
	}
	e.Hints = viewcount.Hints{Present: b("toUInt8(hints_present)"), ScreenW: res.Uint16("screen_w"), ScreenH: res.Uint16("screen_h"),
		Languages: res.Uint8("languages"), TZ: b("toUInt8(tz)"), UAData: b("toUInt8(ua_data)"),
		Secure: b("toUInt8(secure_context)"), Window: b("toUInt8(window_reported)"), OuterW: res.Uint16("window_w"), OuterH: res.Uint16("window_h")}
	e.UTM = viewcount.UTM{Source: res.String("utm_source"), Medium: res.String("utm_medium"), Campaign: res.String("utm_campaign")}
	e.Country = res.String("country")
	e.Headers = viewcount.HeaderFlags(res.Uint16("req_flags"))
	e.ASN = res.Uint32("asn")
	e.Origin = res.String("origin")
	e.Kind = viewcount.Kind(res.Uint8("kind"))
	e.Engagement = viewcount.Engagement{EngagedMS: res.Uint32("engaged_ms"), Scroll: res.Uint8("scroll"), AgeMS: res.Uint32("age_ms")}
	return e
}

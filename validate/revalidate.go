package validate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/feed"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/validate/judge"
)

// RevalStore is what a revalidation reads and rewrites.
type RevalStore interface {
	Execer
}

// Rebuilder is what a revalidation needs of the rollups' repair;
// *repair.Rebuilder implements it over the store, wired in by
// cmd/viewcount. Its errors are the store's, wrapped.
type Rebuilder interface {
	// Cutoff is the first day views_raw holds in full (its retention):
	// events before it exist nowhere any more.
	Cutoff(ctx context.Context, now time.Time) (time.Time, error)
	// RebuildSite recounts site's rollup rows of the UTC days [from, to)
	// from views_raw and swaps them in, calling progress after each month
	// of each rollup; now is the clock for the cutoff. Nothing may insert
	// while it runs (the revalidation holds every partition).
	RebuildSite(ctx context.Context, site string, from, to, now time.Time, progress func(table string, done, total int, rows uint64)) error
}

// Revalidator judges ranges of events again with the current rules and
// puts the new verdicts and the rollups that follow from them in place.
type Revalidator struct {
	JS         jetstream.JetStream
	Partitions int
	Sites      judge.SiteLookup
	Store      RevalStore
	Rollups    Rebuilder // rebuilds the range's rollups; required
	Owner      string    // names the hold in partition leases
	Budget     Budget    // the tables' sizes, as the validators' (Options.Budget)
	Logger     *slog.Logger
	Now        func() time.Time

	cfg judge.Config
}

// ruleVersion is a rule configuration, corrections included, and its
// rule set's version.
type ruleVersion struct {
	cfg     judge.Config
	version string
}

// current is the configuration with the corrections in force now.
func (r *Revalidator) current(ctx context.Context) (ruleVersion, error) {
	cfg, rs, err := WithCorrections(ctx, r.Store, r.cfg)
	if err != nil {
		return ruleVersion{}, fmt.Errorf("revalidate: %w", err)
	}
	return ruleVersion{cfg: cfg, version: rs.Version}, nil
}

// NewRevalidator returns a revalidator judging with cfg, the validators'
// rule configuration. The tables' budgets are a validator's that owns
// every partition (r.Budget), so the rules see what `viewcount serve`'s do.
func NewRevalidator(cfg judge.Config, r Revalidator) (*Revalidator, error) {
	if r.Rollups == nil {
		return nil, errors.New("validate: revalidator: no Rollups to rebuild")
	}
	cfg = r.Budget.perPartition(cfg, r.Partitions)
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, err
	}
	if _, err := judge.NewRules(cfg, r.Sites); err != nil {
		return nil, err
	}
	if r.Logger == nil {
		r.Logger = slog.New(slog.DiscardHandler)
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	r.Logger = r.Logger.With("component", "revalidate")
	r.cfg = cfg
	return &r, nil
}

func (r *Revalidator) margin() time.Duration { return time.Minute }

// ErrBadRange is a request the revalidation cannot serve as asked.
var ErrBadRange = errors.New("revalidate")

// Run revalidates req's range, calling progress with a line at each step.
// A dry run only judges and reports. Otherwise Run holds every partition
// (validators stop cleanly and wait; ingest goes on), rewrites the changed
// verdicts in views_raw a month at a time and rebuilds the rollups' rows
// of the site's days in the range aside, swapping each rollup in whole (a
// month at a time for page_views), then gives the partitions back. Every step can
// be cut and the whole run repeated: the judging depends only on the
// events, a rewritten month gets the same verdicts again, and the rebuild
// starts over from views_raw.
func (r *Revalidator) Run(ctx context.Context, req viewcount.RevalidateRequest, progress func(string)) (viewcount.RevalidateResult, error) {
	if progress == nil {
		progress = func(string) {}
	}
	res := viewcount.RevalidateResult{Site: req.Site, From: req.From, To: req.To, DryRun: req.DryRun,
		Sources: []viewcount.PartitionSource{}, ByReason: []viewcount.ReasonChange{}, ByPage: []viewcount.PageChange{}}
	if err := r.check(ctx, &req, &res); err != nil {
		return res, err
	}
	rs, err := r.current(ctx)
	if err != nil {
		return res, err
	}
	res.Rules = rs.version
	res.From, res.To = req.From, req.To
	work := ctx
	if !req.DryRun {
		progress("holding the partitions: validators finish their batches and wait")
		h, err := HoldPartitions(ctx, r.JS, r.Partitions, r.Owner, r.Logger)
		if err != nil {
			return res, err
		}
		defer func() {
			if err := h.Release(); err != nil {
				r.Logger.Warn("hold lost before release", "err", err)
			}
		}()
		var cancel context.CancelFunc
		work, cancel = mergeCancel(ctx, h.Context())
		defer cancel()
		// What the validators stored on their way out reaches the rollups
		// too, so the rebuild below and the feeds after it agree.
		if _, err := feed.CatchUp(work, r.Store); err != nil {
			return res, fmt.Errorf("revalidate: %w", err)
		}
	}
	id := newRunID()
	var rewrite []changedVerdict
	pages := map[string]*viewcount.PageChange{}
	reasons := map[[2]viewcount.Reason]int{}
	for p := range r.Partitions {
		start := time.Now()
		j, err := r.rejudgePartition(work, p, req, rs)
		if err != nil {
			return res, err
		}
		why := "the stream still holds the range and a rule window before it"
		if j.source == SourceRaw {
			why = "the stream no longer holds the range (its retention passed): read from views_raw, which keeps every event; ticks are not stored, so held views settle at the next event"
		}
		res.Sources = append(res.Sources, viewcount.PartitionSource{Partition: p, Source: j.source, Why: why})
		res.Judged += j.judged
		changes := 0
		for _, c := range j.rewrite {
			rewrite = append(rewrite, changedVerdict{p: p, v: c})
			if c.moved {
				res.Visits++
			}
			if c.old == c.new {
				continue // only the rule set's version or the visit columns are new
			}
			if !c.inRange {
				res.Followed++ // a report after the range, following its view's new verdict
				continue
			}
			changes++
			reasons[[2]viewcount.Reason{c.old, c.new}]++
			pc := pages[c.page]
			if pc == nil {
				pc = &viewcount.PageChange{Page: c.page}
				pages[c.page] = pc
			}
			if c.old == viewcount.Valid {
				pc.Before++
			}
			if c.new == viewcount.Valid {
				pc.After++
			}
		}
		res.Changed += changes
		progress(fmt.Sprintf("partition %d/%d: %d events judged from %s, %d verdicts changed (%s)",
			p+1, r.Partitions, j.judged, j.source, changes, time.Since(start).Round(time.Millisecond)))
	}
	res.ByReason, res.ByPage = sortReasons(reasons), r.pageTotals(work, req, pages)
	if req.DryRun {
		return res, nil
	}
	if err := r.record(work, id, "started", req, res); err != nil {
		return res, err
	}
	if err := r.rewrite(work, rewrite, rs.version, progress); err != nil {
		return res, err
	}
	if err := r.record(work, id, "verdicts", req, res); err != nil {
		return res, err
	}
	// The rollups' rows of the site's days the range touches are recounted
	// aside and swapped in; nothing else changed.
	// So are those of the days after it whose visit rows were rewritten
	// (a report after midnight, following its view's verdict).
	day := func(t time.Time) time.Time { return t.UTC().Truncate(24 * time.Hour) }
	lastRow := req.To.Add(-time.Millisecond)
	for _, c := range rewrite {
		if t := time.UnixMilli(c.v.t); t.After(lastRow) {
			lastRow = t
		}
	}
	from, to := day(req.From), day(lastRow).Add(24*time.Hour)
	err = r.Rollups.RebuildSite(work, req.Site, from, to, r.Now(), func(table string, done, total int, rows uint64) {
		progress(fmt.Sprintf("rebuilding %s for %s %s – %s: month %d/%d", table, req.Site,
			from.Format(time.DateOnly), to.Format(time.DateOnly), done, total))
	})
	if err != nil {
		return res, fmt.Errorf("revalidate: %w", err)
	}
	if err := r.record(work, id, "done", req, res); err != nil {
		return res, err
	}
	progress(fmt.Sprintf("done: %d of %d verdicts changed; rollups rebuilt for the range", res.Changed, res.Judged))
	return res, nil
}

// check validates the request and cuts its start to what views_raw holds
// in full (its retention): events before that exist nowhere any more.
func (r *Revalidator) check(ctx context.Context, req *viewcount.RevalidateRequest, res *viewcount.RevalidateResult) error {
	switch {
	case req.Site == "":
		return fmt.Errorf("%w: site: required", ErrBadRange)
	case req.From.IsZero() || req.To.IsZero():
		return fmt.Errorf("%w: from and to: both required", ErrBadRange)
	case !req.From.Before(req.To):
		return fmt.Errorf("%w: from %s is not before to %s", ErrBadRange, req.From.Format(time.RFC3339), req.To.Format(time.RFC3339))
	}
	// Events are timed to the millisecond (views_raw's DateTime64(3)): a
	// finer bound would judge an event of its first millisecond in one
	// place and leave it out in another.
	req.From, req.To = req.From.UTC().Truncate(time.Millisecond), req.To.UTC().Truncate(time.Millisecond)
	cutoff, err := r.Rollups.Cutoff(ctx, r.Now())
	if err != nil {
		return fmt.Errorf("revalidate: %w", err)
	}
	if !req.To.After(cutoff) {
		return fmt.Errorf("%w: views_raw holds events from %s on (--raw-retention); nothing in the range is left to judge", ErrBadRange, cutoff.Format(time.DateOnly))
	}
	if req.From.Before(cutoff) {
		res.Note = fmt.Sprintf("from cut to %s: views_raw's retention removed what came before", cutoff.Format(time.RFC3339))
		req.From = cutoff
	}
	return nil
}

// changedVerdict is a change with its partition.
type changedVerdict struct {
	p int
	v verdict
}

// rewrite puts the new verdicts (and the new rule set's version) into
// views_raw, a month at a time.
func (r *Revalidator) rewrite(ctx context.Context, changed []changedVerdict, version string, progress func(string)) error {
	if len(changed) == 0 {
		return nil
	}
	if err := r.script(ctx, "revalidate_prepare", nil); err != nil {
		return err
	}
	var b strings.Builder
	for i, c := range changed {
		changeRow(&b, c, version)
		if (i+1)%20000 == 0 || i == len(changed)-1 {
			if err := r.script(ctx, "revalidate_add", store.Params{"rows": b.String()}); err != nil {
				return err
			}
			b.Reset()
		}
	}
	months, err := r.Store.Query(ctx, queries.Text(queries.RawMonths), nil)
	if err != nil {
		return fmt.Errorf("revalidate: list views_raw months: %w", err)
	}
	var names []string
	for months.Next() {
		names = append(names, months.String("month"))
	}
	if err := months.Err(); err != nil {
		return fmt.Errorf("revalidate: list views_raw months: %w", err)
	}
	for i, month := range names {
		// Every month is copied only if it holds a change: the range's
		// months, plus a held view's stored in the next one.
		if has, err := r.holdsChange(ctx, month); err != nil {
			return err
		} else if !has {
			continue
		}
		if err := r.script(ctx, "revalidate_month", store.Params{"partition": month}); err != nil {
			return fmt.Errorf("%w (month %s)", err, month)
		}
		progress(fmt.Sprintf("views_raw month %s rewritten (%d/%d)", month, i+1, len(names)))
	}
	return r.script(ctx, "revalidate_drop", nil)
}

// changeRow writes one row of revalidate_changes as TSV, in the column
// order of revalidate_prepare.sql. Pages and campaigns are what visitors
// sent: every string is escaped (tsvString).
func changeRow(b *strings.Builder, c changedVerdict, version string) {
	v, d := c.v, &c.v.visit
	rules := version
	if !v.inRange {
		rules = v.rules
	}
	fmt.Fprintf(b, "%d\t%d\t%d\t", c.p, v.seq, v.idx)
	for _, s := range []string{string(v.new), rules} {
		tsvString(b, s)
		b.WriteByte('\t')
	}
	fmt.Fprintf(b, "%d\t%d\t%d\t", b2i(d.set), d.viewMS, d.startMS)
	for _, s := range []string{d.entryPage, d.entryHost, d.entrySource, d.utm.Source, d.utm.Medium, d.utm.Campaign, d.prevPage} {
		tsvString(b, s)
		b.WriteByte('\t')
	}
	fmt.Fprintf(b, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t", d.visits, d.bounces, d.visitMS, d.engagedMS, d.engFrom, d.engTo, d.scrollFrom, d.scrollTo)
	if h := v.report; h != nil {
		fmt.Fprintf(b, "%d\t%d\t%d\t", b2i(h.present), h.w, h.h)
		tsvString(b, h.screen)
	} else {
		b.WriteString("\\N\t\\N\t\\N\t\\N")
	}
	b.WriteByte('\n')
}

// tsvString writes s as a TSV field ClickHouse reads back byte for byte:
// the escapes of its TabSeparated format, nothing else changed.
func tsvString(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case 0:
			b.WriteString(`\0`)
		default:
			b.WriteByte(c)
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// holdsChange reports whether views_raw's month (partition id) has a row
// whose verdict changes.
func (r *Revalidator) holdsChange(ctx context.Context, month string) (bool, error) {
	res, err := r.Store.Query(ctx, queries.Text(queries.RevalidateMonthChanges), store.Params{"partition": month})
	if err != nil {
		return false, fmt.Errorf("revalidate: changes in month %s: %w", month, err)
	}
	if !res.Next() {
		return false, res.Err()
	}
	n := res.Uint64("count()")
	if err := res.Err(); err != nil {
		return false, fmt.Errorf("revalidate: changes in month %s: %w", month, err)
	}
	return n != 0, nil
}

func (r *Revalidator) script(ctx context.Context, name string, p store.Params) error {
	for i, st := range queries.Repair(name) {
		if err := r.Store.Exec(ctx, st, p); err != nil {
			return fmt.Errorf("revalidate: %s statement %d: %w", name, i+1, err)
		}
	}
	return nil
}

// record writes one step of the run to the audit trail.
func (r *Revalidator) record(ctx context.Context, id, state string, req viewcount.RevalidateRequest, res viewcount.RevalidateResult) error {
	err := r.Store.Exec(ctx, queries.Text(queries.RevalidateRecord), store.Params{"id": id, "state": state, "site": req.Site,
		"from": ms(req.From), "to": ms(req.To), "rules": res.Rules, "who": req.Who,
		"judged": strconv.Itoa(res.Judged), "changed": strconv.Itoa(res.Changed)})
	if err != nil {
		return fmt.Errorf("revalidate: record %s: %w", state, err)
	}
	return nil
}

// pageTotals turns the per-page changes into valid views before and after,
// from views_raw's count of each changed page's valid views in the range.
func (r *Revalidator) pageTotals(ctx context.Context, req viewcount.RevalidateRequest, pages map[string]*viewcount.PageChange) []viewcount.PageChange {
	out := make([]viewcount.PageChange, 0, len(pages))
	for _, pc := range pages {
		out = append(out, *pc)
	}
	if res, err := r.Store.Query(ctx, queries.Text(queries.RevalidatePageValid), store.Params{"site": req.Site,
		"from": ms(req.From), "to": ms(req.To)}); err == nil {
		valid := make(map[string]int, res.Len())
		for res.Next() {
			valid[res.String("page")] = res.Int("count()")
		}
		for i := 0; res.Err() == nil && i < len(out); i++ {
			// Before is views_raw's now; after adds what turned valid and
			// takes what stopped being.
			gained, lost := out[i].After, out[i].Before
			out[i].Before = valid[out[i].Page]
			out[i].After = out[i].Before + gained - lost
		}
	}
	sort.Slice(out, func(i, j int) bool {
		di, dj := out[i].Before-out[i].After, out[j].Before-out[j].After
		if di != dj {
			return di > dj
		}
		return out[i].Page < out[j].Page
	})
	return out
}

func sortReasons(m map[[2]viewcount.Reason]int) []viewcount.ReasonChange {
	out := make([]viewcount.ReasonChange, 0, len(m))
	for k, n := range m {
		out = append(out, viewcount.ReasonChange{From: k[0], To: k[1], Events: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Events != out[j].Events {
			return out[i].Events > out[j].Events
		}
		return out[i].From+out[i].To < out[j].From+out[j].To
	})
	return out
}

func newRunID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// mergeCancel returns a context that ends when either a or b does.
func mergeCancel(a, b context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(a)
	stop := context.AfterFunc(b, func() { cancel(context.Cause(b)) })
	return ctx, func() { stop(); cancel(nil) }
}

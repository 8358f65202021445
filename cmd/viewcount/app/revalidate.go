package app

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/api"
	"github.com/viewcount/viewcount/rollup/repair"
	"github.com/viewcount/viewcount/validate"
)

// revalidator is validate.Revalidator as the api consumes it
// (api.Revalidator): its request errors marked as the api's.
type revalidator struct{ r *validate.Revalidator }

// revalidator builds the api's revalidator from the validators' rule
// flags, so a revalidation judges with the rules this process's
// validators run (restart them with the new rules first), and the
// corrector over it.
func (m *Main) revalidator() (revalidator, error) {
	cfg, err := m.ruleConfig()
	if err != nil {
		return revalidator{}, err
	}
	host, _ := os.Hostname()
	r, err := validate.NewRevalidator(cfg, validate.Revalidator{JS: m.stream.JS, Partitions: m.stream.Partitions,
		Sites: m.sites, Store: m.store, Rollups: repair.NewRebuilder(m.store, m.logger.With("component", "revalidate")), Owner: fmt.Sprintf("revalidate:%s:%d", host, os.Getpid()), Logger: m.logger, Now: m.now,
		Budget: m.cfg.Validate.Budget})
	if err != nil {
		return revalidator{}, err
	}
	return revalidator{r}, nil
}

func (a revalidator) Revalidate(ctx context.Context, req viewcount.RevalidateRequest, progress func(string)) (viewcount.RevalidateResult, error) {
	res, err := a.r.Run(ctx, req, progress)
	if errors.Is(err, validate.ErrBadRange) {
		err = fmt.Errorf("%w: %w", api.ErrRevalidateRequest, err)
	}
	return res, err
}

const revalidateUsage = `usage: viewcount revalidate --site SITE --from TIME --to TIME [--dry-run] [--who TEXT] [--json]
  judges the site's events received in [from, to) again with the rules the running
  server's validators use now, rewrites the changed verdicts and rebuilds the rollups
  (--dry-run: only report what would change). TIME: RFC 3339 or YYYY-MM-DD (UTC).
common flags: [--server URL] [--admin-token-file FILE] [--data DIR]; the admin token: VIEWCOUNT_ADMIN_TOKEN, the file, else DIR/admin_token`

// runRevalidate implements `viewcount revalidate` against a running
// server's admin API: progress lines go to stderr, the result to stdout.
func runRevalidate(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("viewcount revalidate", flag.ContinueOnError)
	af := adminFlags(fs)
	site := fs.String("site", "", "the site whose events to judge again")
	from := fs.String("from", "", "start of the range (RFC 3339, or a UTC day YYYY-MM-DD)")
	to := fs.String("to", "", "end of the range, excluded")
	dry := fs.Bool("dry-run", false, "report the changes per reason and per page; change nothing")
	who := fs.String("who", envOr("USER", ""), "recorded in the audit trail: who asks and why")
	jsonOut := fs.Bool("json", false, "print the result as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 || *site == "" || *from == "" || *to == "" {
		return errors.New(revalidateUsage)
	}
	tf, err := parseTime(*from)
	if err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	tt, err := parseTime(*to)
	if err != nil {
		return fmt.Errorf("--to: %w", err)
	}
	admin, err := af.client("/v1/admin/revalidate", stderr)
	if err != nil {
		return err
	}
	body, _ := json.Marshal(viewcount.RevalidateRequest{Site: *site, From: tf, To: tt, DryRun: *dry, Who: *who})
	raw, err := admin.stream("revalidate", http.MethodPost, "", body, stderr)
	if err != nil {
		return err
	}
	var res viewcount.RevalidateResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("revalidate: answer: %w", err)
	}
	if *jsonOut {
		return printJSON(stdout, res)
	}
	return printRevalidation(stdout, res)
}

// stream sends a request answered with JSON lines (revalidations): each
// {"progress"} goes to progress, and the {"result"} is returned; an
// {"error"} or an answer ending before the result is an error.
func (a adminClient) stream(what, method, path string, body []byte, progress io.Writer) (json.RawMessage, error) {
	req, err := a.request(what, method, path, body)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		out, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		return nil, fmt.Errorf("%s: %s: %s", what, resp.Status, strings.TrimSpace(string(out)))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 1<<16), 64<<20)
	for sc.Scan() {
		var line struct {
			Progress string          `json:"progress"`
			Error    string          `json:"error"`
			Result   json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return nil, fmt.Errorf("%s: answer: %w", what, err)
		}
		switch {
		case line.Progress != "":
			fmt.Fprintln(progress, line.Progress)
		case line.Error != "":
			return nil, fmt.Errorf("%s: %s", what, line.Error)
		case line.Result != nil:
			return line.Result, nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: answer: %w", what, err)
	}
	return nil, fmt.Errorf("%s: the server closed the answer before the result; rerun to complete", what)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// parseTime reads RFC 3339 or a UTC day.
func parseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return t, fmt.Errorf("%q: want RFC 3339 (2026-11-30T12:00:00Z) or a day (2026-11-30)", s)
	}
	return t, nil
}

func printRevalidation(w io.Writer, r viewcount.RevalidateResult) error {
	verb := "changed"
	if r.DryRun {
		verb = "would change"
	}
	fmt.Fprintf(w, "%s %s – %s, rules %s: %d events judged, %d verdicts %s\n",
		r.Site, r.From.Format(time.RFC3339), r.To.Format(time.RFC3339), r.Rules, r.Judged, r.Changed, verb)
	if r.Visits > 0 || r.Followed > 0 {
		fmt.Fprintf(w, "visit and engagement rows %s: %d; engagement reports after the range following their view: %d\n", verb, r.Visits, r.Followed)
	}
	if r.Note != "" {
		fmt.Fprintln(w, "note:", r.Note)
	}
	sources := map[string]int{}
	for _, s := range r.Sources {
		sources[s.Source]++
	}
	for src, n := range sources {
		fmt.Fprintf(w, "read from %s: %d partition(s)\n", src, n)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(r.ByReason) > 0 {
		fmt.Fprintln(tw, "\nFROM\tTO\tEVENTS")
		for _, c := range r.ByReason {
			fmt.Fprintf(tw, "%s\t%s\t%d\n", c.From, c.To, c.Events)
		}
	}
	if len(r.ByPage) > 0 {
		fmt.Fprintln(tw, "\nPAGE\tVALID BEFORE\tVALID AFTER")
		for _, p := range r.ByPage {
			fmt.Fprintf(tw, "%s\t%d\t%d\n", p.Page, p.Before, p.After)
		}
	}
	return tw.Flush()
}

// corrector is validate's corrections as the api consumes them
// (api.Corrector): recorded in the store, then applied to their range by
// the revalidator.
type corrector struct {
	rv revalidator
	q  validate.Execer
}

func (c corrector) AddCorrection(ctx context.Context, req viewcount.CorrectionRequest, progress func(string)) (viewcount.CorrectionResult, error) {
	corr, err := req.Correction()
	if err != nil {
		return viewcount.CorrectionResult{}, fmt.Errorf("%w: %w", api.ErrRevalidateRequest, err)
	}
	corr, err = validate.AddCorrection(ctx, c.q, corr, req.Who, req.Why)
	if err != nil {
		if corr.ID == "" {
			err = fmt.Errorf("%w: %w", api.ErrRevalidateRequest, err)
		}
		return viewcount.CorrectionResult{}, err
	}
	progress(fmt.Sprintf("correction %s recorded: %s", corr.ID, corr))
	return c.apply(ctx, corr, req.Who, progress)
}

func (c corrector) UndoCorrection(ctx context.Context, id, who, why string, progress func(string)) (viewcount.CorrectionResult, error) {
	corr, ok, err := validate.UndoCorrection(ctx, c.q, id, who, why)
	if err != nil {
		return viewcount.CorrectionResult{}, err
	}
	if !ok {
		return viewcount.CorrectionResult{}, fmt.Errorf("%w: no correction %q in force", api.ErrNotFound, id)
	}
	progress(fmt.Sprintf("correction %s undone", corr.ID))
	return c.apply(ctx, corr, who, progress)
}

// apply revalidates the correction's range of its site. If it stops, the
// correction stands recorded: validators apply it from their next start,
// and `viewcount revalidate` over its range completes the past.
func (c corrector) apply(ctx context.Context, corr viewcount.Correction, who string, progress func(string)) (viewcount.CorrectionResult, error) {
	res, err := c.rv.r.Run(ctx, viewcount.RevalidateRequest{Site: corr.Site, From: corr.From, To: corr.To, Who: who + " (correction " + corr.ID + ")"}, progress)
	if err != nil {
		return viewcount.CorrectionResult{}, fmt.Errorf("correction %s recorded, its revalidation stopped (rerun viewcount revalidate --site %s --from %s --to %s): %w",
			corr.ID, corr.Site, corr.From.Format(time.RFC3339Nano), corr.To.Format(time.RFC3339Nano), err)
	}
	return viewcount.CorrectionResult{Correction: corr, Revalidation: res}, nil
}

func (c corrector) ListCorrections(ctx context.Context) ([]viewcount.CorrectionRecord, error) {
	return validate.ListCorrections(ctx, c.q)
}

package main

import (
	"bufio"
	"bytes"
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

	"github.com/viewcount/viewcount/api"
	"github.com/viewcount/viewcount/validate"
)

// revalidator is validate.Revalidator as the api consumes it.
type revalidator struct{ r *validate.Revalidator }

// revalidator builds the api's revalidator from the validators' rule
// flags, so a revalidation judges with the rules this process's
// validators run (restart them with the new rules first).
func (m *Main) revalidator() (api.Revalidator, error) {
	cfg, err := m.ruleConfig()
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	r, err := validate.NewRevalidator(cfg, validate.Revalidator{JS: m.stream.JS, Partitions: m.stream.Partitions,
		Sites: m.sites, Store: m.store, Owner: fmt.Sprintf("revalidate:%s:%d", host, os.Getpid()), Logger: m.logger, Now: m.now})
	if err != nil {
		return nil, err
	}
	return revalidator{r}, nil
}

func (a revalidator) Revalidate(ctx context.Context, req api.RevalidateRequest, progress func(string)) (any, error) {
	res, err := a.r.Run(ctx, validate.RevalidateRequest{Site: req.Site, From: req.From, To: req.To, DryRun: req.DryRun, Who: req.Who}, progress)
	if errors.Is(err, validate.ErrBadRange) {
		err = fmt.Errorf("%w: %w", api.ErrRevalidateRequest, err)
	}
	return res, err
}

const revalidateUsage = `usage: viewcount revalidate --site SITE --from TIME --to TIME [--dry-run] [--who TEXT] [--json]
  judges the site's events received in [from, to) again with the rules the running
  server's validators use now, rewrites the changed verdicts and rebuilds the rollups
  (--dry-run: only report what would change). TIME: RFC 3339 or YYYY-MM-DD (UTC).
common flags: [--server URL] [--admin-token T] [--data DIR]`

// runRevalidate implements `viewcount revalidate` against a running
// server's admin API: progress lines go to stderr, the result to stdout.
func runRevalidate(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("viewcount revalidate", flag.ContinueOnError)
	server, token, data := adminFlags(fs)
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
	admin, err := newAdminClient(*server, "/v1/admin/revalidate", *token, *data)
	if err != nil {
		return err
	}
	body, _ := json.Marshal(api.RevalidateRequest{Site: *site, From: tf, To: tt, DryRun: *dry, Who: *who})
	req, err := http.NewRequest(http.MethodPost, admin.base, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("revalidate: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+admin.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("revalidate: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		out, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		return fmt.Errorf("revalidate: %s: %s", resp.Status, strings.TrimSpace(string(out)))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 1<<16), 64<<20)
	for sc.Scan() {
		var line struct {
			Progress string                     `json:"progress"`
			Error    string                     `json:"error"`
			Result   *validate.RevalidateResult `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return fmt.Errorf("revalidate: answer: %w", err)
		}
		switch {
		case line.Progress != "":
			fmt.Fprintln(stderr, line.Progress)
		case line.Error != "":
			return errors.New(line.Error)
		case line.Result != nil:
			if *jsonOut {
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(line.Result)
			}
			return printRevalidation(stdout, *line.Result)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("revalidate: answer: %w", err)
	}
	return errors.New("revalidate: the server closed the answer before the result; rerun to complete")
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

func printRevalidation(w io.Writer, r validate.RevalidateResult) error {
	verb := "changed"
	if r.DryRun {
		verb = "would change"
	}
	fmt.Fprintf(w, "%s %s – %s, rules %s: %d events judged, %d verdicts %s\n",
		r.Site, r.From.Format(time.RFC3339), r.To.Format(time.RFC3339), r.Rules, r.Judged, r.Changed, verb)
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

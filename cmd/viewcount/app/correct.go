package app

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/viewcount/viewcount"
)

const correctUsage = `usage:
  viewcount correct add --site S --kind asn|network|referrer|path --value V --from T1 --to T2 --why TEXT [--who NAME]
      exclude the site's views from an AS or network, from a referrer host (and its
      subdomains), or of a path (a prefix with a trailing *) received in [T1, T2);
      recorded with who and why, then applied to the past by a revalidation
  viewcount correct add --site S --kind allow [--ua TEXT] [--family NAME] [--reason R] [--asn N] --from T1 --to T2 --why TEXT
      restore the site's views the rules rejected (a false positive): those whose user
      agent holds TEXT (any case), of the browser NAME (as the dashboard names it), from
      AS N, rejected as R (bot_ua, headless, bad_hints, header_mismatch, datacenter,
      bad_referrer, rate, network_rotation; any of them when not given); all terms
      together. An exclusion always wins over an allow
  viewcount correct undo ID --why TEXT [--who NAME]   the same, undone
  viewcount correct list [--json]                     every correction, in force or undone
common flags: [--server URL] [--admin-token-file FILE] [--data DIR]; the admin token: VIEWCOUNT_ADMIN_TOKEN, the file, else DIR/admin_token; TIME: RFC 3339 or YYYY-MM-DD (UTC)`

// runCorrect implements `viewcount correct add|undo|list` against a
// running server's admin API.
func runCorrect(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(correctUsage)
	}
	cmd, rest := args[0], args[1:]
	var id string
	if cmd == "undo" && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		id, rest = rest[0], rest[1:]
	}
	fs := flag.NewFlagSet("viewcount correct "+cmd, flag.ContinueOnError)
	af := adminFlags(fs)
	site := fs.String("site", "", "the site")
	kind := fs.String("kind", "", "asn, network, referrer or path")
	value := fs.String("value", "", "the AS number, network id (views_raw.network), referrer host, or path (prefix*)")
	allowUA := fs.String("ua", "", "kind allow: a user-agent substring (any case)")
	family := fs.String("family", "", "kind allow: a browser family, as the dashboard names it")
	reason := fs.String("reason", "", "kind allow: the reason to restore")
	asn := fs.String("asn", "", "kind allow: an AS number")
	from := fs.String("from", "", "start of the range")
	to := fs.String("to", "", "end of the range, excluded")
	why := fs.String("why", "", "why, for the audit trail (required)")
	who := fs.String("who", envOr("USER", ""), "who, for the audit trail")
	jsonOut := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return errors.New(correctUsage)
	}
	admin, err := af.client("/v1/admin/corrections", stderr)
	if err != nil {
		return err
	}
	switch cmd {
	case "add", "undo":
		if *why == "" {
			return errors.New("correct: --why is required: the audit trail says why\n" + correctUsage)
		}
		var raw json.RawMessage
		if cmd == "add" {
			tf, err1 := parseTime(*from)
			tt, err2 := parseTime(*to)
			terms := *allowUA != "" || *family != "" || *reason != "" || *asn != ""
			if *site == "" || *kind == "" || *value == "" && !terms || err1 != nil || err2 != nil {
				return fmt.Errorf("correct add: --site, --kind, --value (for allow: --ua, --family, --reason or --asn), --from and --to are required (%v)\n%s", errors.Join(err1, err2), correctUsage)
			}
			body, _ := json.Marshal(viewcount.CorrectionRequest{Site: *site, Kind: *kind, Value: *value, From: tf, To: tt, Who: *who, Why: *why,
				UA: *allowUA, Family: *family, Reason: *reason, ASN: *asn})
			raw, err = admin.stream("correct add", http.MethodPost, "", body, stderr)
		} else {
			if id == "" {
				return errors.New(correctUsage)
			}
			q := url.Values{"who": {*who}, "why": {*why}}
			raw, err = admin.stream("correct undo", http.MethodDelete, "/"+url.PathEscape(id)+"?"+q.Encode(), nil, stderr)
		}
		if err != nil {
			return err
		}
		var res viewcount.CorrectionResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return fmt.Errorf("correct: answer: %w", err)
		}
		if *jsonOut {
			return printJSON(stdout, res)
		}
		fmt.Fprintf(stdout, "correction %s (%s)\n", res.Correction.ID, cmd)
		return printRevalidation(stdout, res.Revalidation)
	case "list":
		out, err := admin.do("correct list", http.MethodGet, "", nil, http.StatusOK)
		if err != nil {
			return err
		}
		var ans struct {
			Corrections []viewcount.CorrectionRecord `json:"corrections"`
		}
		if err := json.Unmarshal(out, &ans); err != nil {
			return fmt.Errorf("correct list: answer: %w", err)
		}
		if *jsonOut {
			return printJSON(stdout, ans)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATE\tSITE\tKIND\tVALUE\tFROM\tTO\tADDED BY\tWHY")
		for _, c := range ans.Corrections {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, c.State, c.Site, c.Kind, c.Value,
				c.From.Format(time.RFC3339), c.To.Format(time.RFC3339), c.AddedBy, c.AddedWhy)
		}
		return tw.Flush()
	}
	return errors.New(correctUsage)
}

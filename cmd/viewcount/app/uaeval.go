package app

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/viewcount/viewcount/validate"
	"github.com/viewcount/viewcount/validate/uaeval"
)

const uaEvalUsage = `usage: viewcount ua-eval [flags]

Judges the user agents of public data sets with the validator's rules and
prints, per set, the share of bot user agents rejected (recall) or the
traffic-weighted share of human user agents rejected (false positives), per
tag or device class, and the first user agents each set gets wrong.

Each user agent is judged twice: as sent, inside the request its kind
sends (a person's user agent in a browser's request, a bot's in a script's:
no Accept-Language, no Fetch Metadata), and alone (the user agent is the
only evidence). Weak evidence (a user agent the browser model does not
recognise) rejects only in company, so ALONE is the share that positive
evidence in the user agent catches by itself.

The sets are pinned packages that 'make uadata' fetches and checks:
crawler-user-agents and uap-core's spiders (bots); user-agents, a top-100
list, legacy browsers and uap-core's device corpus (people).

flags:
`

// runUAEval implements `viewcount ua-eval`.
func runUAEval(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("viewcount ua-eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, uaEvalUsage)
		fs.PrintDefaults()
	}
	e := &envFlag{fs: fs}
	var dir, botList string
	var replace bool
	var misses int
	e.str(&dir, "data", uaeval.EnvDir, uaeval.DefaultDir(), "directory holding the data sets that make uadata fetched")
	e.str(&botList, "bot-list", "VIEWCOUNT_BOT_LIST", "", "file of extra bot user-agent patterns, as for serve")
	e.bool(&replace, "bot-list-replace", "VIEWCOUNT_BOT_LIST_REPLACE", "use only --bot-list, not the built-in bot lists")
	e.int(&misses, "misses", "VIEWCOUNT_UAEVAL_MISSES", 20, "user agents each set gets wrong to print")
	if err := errors.Join(e.err, fs.Parse(args)); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("ua-eval: unexpected argument %q", fs.Arg(0))
	}
	if misses < 0 {
		return fmt.Errorf("ua-eval: --misses %d: must not be negative", misses)
	}
	cfg := validate.Config{ReplaceBotList: replace}
	if botList != "" {
		patterns, err := validate.LoadPatterns(botList)
		if err != nil {
			return fmt.Errorf("ua-eval: %w", err)
		}
		cfg.ExtraBotPatterns = patterns
	}
	rules, err := uaeval.NewRules(cfg)
	if err != nil {
		return fmt.Errorf("ua-eval: %w", err)
	}
	results, err := uaeval.Evaluate(rules, dir, uaeval.Pinned(), misses)
	if err != nil {
		return fmt.Errorf("ua-eval: %w", err)
	}
	return uaeval.Print(stdout, results)
}

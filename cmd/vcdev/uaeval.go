package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/viewcount/viewcount/validate/judge"
	"github.com/viewcount/viewcount/validate/uaeval"
)

const uaEvalUsage = `usage: vcdev ua-eval [flags]

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

// runUAEval implements `vcdev ua-eval`.
func runUAEval(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("vcdev ua-eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, uaEvalUsage)
		fs.PrintDefaults()
	}
	// Each flag's default comes from its variable, as serve's do; a
	// variable that does not parse is refused rather than ignored.
	replaceDef, err := envBool("VIEWCOUNT_BOT_LIST_REPLACE")
	if err != nil {
		return fmt.Errorf("ua-eval: %w", err)
	}
	missesDef, err := envInt("VIEWCOUNT_UAEVAL_MISSES", 20)
	if err != nil {
		return fmt.Errorf("ua-eval: %w", err)
	}
	var dir, botList string
	var replace bool
	var misses int
	fs.StringVar(&dir, "data", uaeval.DefaultDir(), "directory holding the data sets that make uadata fetched (env "+uaeval.EnvDir+")")
	fs.StringVar(&botList, "bot-list", envOr("VIEWCOUNT_BOT_LIST", ""), "file of extra bot user-agent patterns, as for serve (env VIEWCOUNT_BOT_LIST)")
	fs.BoolVar(&replace, "bot-list-replace", replaceDef, "use only --bot-list, not the built-in bot lists (env VIEWCOUNT_BOT_LIST_REPLACE)")
	fs.IntVar(&misses, "misses", missesDef, "user agents each set gets wrong to print (env VIEWCOUNT_UAEVAL_MISSES)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("ua-eval: unexpected argument %q", fs.Arg(0))
	}
	if misses < 0 {
		return fmt.Errorf("ua-eval: --misses %d: must not be negative", misses)
	}
	cfg := judge.Config{ReplaceBotList: replace}
	if botList != "" {
		patterns, err := judge.LoadPatterns(botList)
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

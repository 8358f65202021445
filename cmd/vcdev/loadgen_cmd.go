package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/viewcount/viewcount/cmd/vcdev/loadgen"
)

const loadgenUsage = `usage: vcdev loadgen [flags]

Sends page-view load to a running server and reports throughput, latency
percentiles (from the scheduled send time in open loop), errors by status and
kind, the pipeline lag and the server's memory. Only loopback servers unless
--allow-remote. For filtering precision, run --mix realistic --endpoint mix:
every event id starts with its class ("bot-…", "human-…").

Each connection is one worker speaking HTTP/1.1 keep-alive itself, with
requests assembled into a reused buffer, so loadgen's own CPU per request
stays close to wrk's and the server, not the client, is what is measured;
--baseline drives a bare in-process Gin server with the same client, so the
ratio holds on a noisy machine. https targets go through net/http.

Endpoints: pixel (GET /p.gif), beacon (POST /v1/events, one event), batch
(POST /v1/events, --batch events), mix (each hit as the traffic model says),
count (GET /v1/sites/{site}/count?page=P, pages by the same popularity as
views, or the --hot page; 200 is success, no events, no lag).

Lag (--lag, needs the server's /metrics): every 100 ms while sending, the age
of the newest inserted event (when the acknowledged count reached
viewcount_rows_inserted_total), reported as p50/p99/max over the samples
after the first second; and after sending, how long until every
acknowledged event was inserted. Server memory (process_resident_memory_bytes,
go_memstats_heap_inuse_bytes) is reported at the start and end of sending
and on the progress lines when the server exports it.

flags:
`

// warnTokenFlag is the warning for an admin token given on the command line.
const warnTokenFlag = "--admin-token on the command line is readable by every local user (ps, /proc/PID/cmdline); use VIEWCOUNT_ADMIN_TOKEN"

// runLoadgen implements `vcdev loadgen`.
func runLoadgen(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return loadgenMain(ctx, args, stdout, stderr)
}

func loadgenMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("vcdev loadgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, loadgenUsage)
		fs.PrintDefaults()
	}
	var cfg loadgen.Config
	fs.StringVar(&cfg.Server, "server", envOr("VIEWCOUNT_SERVER", "http://127.0.0.1:8080"), "server URL (env VIEWCOUNT_SERVER)")
	site := fs.String("site", "load.example", "site the traffic is for")
	token := fs.String("admin-token", os.Getenv("VIEWCOUNT_ADMIN_TOKEN"), "if set, register --site first with this admin token (409 is fine); prefer the env variable: a command line is readable by every local user (env VIEWCOUNT_ADMIN_TOKEN)")
	endpoint := fs.String("endpoint", "pixel", "pixel | beacon | batch | mix (each hit as the traffic model says: labels hold for every class) | count (public count reads)")
	fs.IntVar(&cfg.Batch, "batch", 100, "events per request for --endpoint batch (at most 100)")
	mixName := fs.String("mix", "realistic", "realistic (labelled humans, bots, floods, farms…) | human (humans only)")
	pages := fs.Int("pages", 500, "distinct pages in the site's catalogue (Zipf popularity), for views and count reads")
	hot := fs.Bool("hot-page", false, "every hit and count read on one page, the viral post")
	fs.BoolVar(hot, "hot", false, "same as --hot-page")
	fs.IntVar(&cfg.Connections, "connections", 64, "concurrent keep-alive connections, one worker each")
	fs.Float64Var(&cfg.Rate, "rate", 0, "open-loop target in requests/s; 0 = closed loop at full speed")
	fs.DurationVar(&cfg.Duration, "duration", 10*time.Second, "how long to send (with --requests: a bound only when given too)")
	fs.Int64Var(&cfg.Requests, "requests", 0, "send this many requests instead of for --duration")
	fs.DurationVar(&cfg.Timeout, "timeout", 30*time.Second, "per-request timeout, from writing the request to the end of the answer")
	fs.BoolVar(&cfg.Lag, "lag", true, "sample the pipeline lag every 100 ms while sending, then wait for the server's rows_inserted counter to catch up (needs /metrics; not for --endpoint count)")
	fs.DurationVar(&cfg.LagTimeout, "lag-timeout", time.Minute, "give up waiting for the end-to-end lag after this")
	baseline := fs.Bool("baseline", false, "first run the same load against an in-process bare Gin server and report the ratio")
	fs.BoolVar(&cfg.AllowRemote, "allow-remote", false, "allow a server that is not on a loopback address")
	asJSON := fs.Bool("json", false, "print the final report as JSON")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr (otherwise one a second)")
	fs.DurationVar(&cfg.Window, "window", 0, "also print, every this long, that window's own p50, p99, p99.9 and max and the server's RSS (a long run's stability: the per-second lines' p99 is the run's so far); 0 = off")
	seed := fs.Uint64("seed", 0, "traffic seed (0: from the clock, printed); the same seed sends the same ids, which a server counts as retries")
	asnDB := fs.String("asn-db", envOr("VIEWCOUNT_ASN_DB", ""), "the server's AS-number data, so humans avoid hosting networks it judges datacenter: empty = the cached default, off = none (env VIEWCOUNT_ASN_DB)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("loadgen: unexpected argument %q", fs.Arg(0))
	}
	cfg.Endpoint = loadgen.Endpoint(*endpoint)
	set := flagSet(fs)
	if set["admin-token"] {
		fmt.Fprintln(stderr, "vcdev: warning:", warnTokenFlag)
	}
	if set["requests"] && !set["duration"] {
		cfg.Duration = 0
	}
	if *seed == 0 {
		*seed = uint64(time.Now().UnixNano())
	}
	if !*quiet {
		cfg.Progress = stderr
	}

	var mix loadgen.Mix
	switch *mixName {
	case "realistic":
		mix = loadgen.DefaultMix()
	case "human":
		mix = loadgen.HumanMix()
	default:
		return fmt.Errorf("loadgen: --mix %q: want realistic or human", *mixName)
	}
	mix.Sites, mix.Pages, mix.HotPage = []string{*site}, *pages, *hot
	hosting, err := loadgen.HostingFilter(*asnDB, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		return err
	}
	mix.Hosting = hosting
	mix.RunID = strconv.FormatUint(*seed, 36)
	switch cfg.Endpoint {
	case loadgen.EndpointPixel:
		mix.BeaconShare = 0
	case loadgen.EndpointBeacon, loadgen.EndpointBatch:
		mix.BeaconShare = 1 // so humans carry the hints a beacon has
	}
	source := func() (*loadgen.Generator, error) {
		return loadgen.NewGenerator(mix, rand.New(rand.NewPCG(*seed, *seed^0x9e3779b97f4a7c15)))
	}
	if _, err := source(); err != nil {
		return err
	}
	if _, err := loadgen.CheckTarget(cfg.Server, cfg.AllowRemote); err != nil {
		return err
	}
	if *token != "" {
		if err := loadgen.RegisterSite(ctx, cfg.Server, *token, *site, cfg.AllowRemote); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "loadgen: seed %d, %s mix, %s endpoint\n", *seed, *mixName, cfg.Endpoint)

	var cmp loadgen.Comparison
	if *baseline {
		b, err := loadgen.StartBaseline()
		if err != nil {
			return err
		}
		bcfg := cfg
		bcfg.Server, bcfg.Lag = b.URL, false
		src, _ := source()
		fmt.Fprintf(stderr, "loadgen: baseline %s\n", b.URL)
		cmp.Baseline, err = loadgen.Run(ctx, bcfg, src)
		if cerr := b.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return writeComparison(stdout, cmp, *asJSON)
		}
		fmt.Fprintf(stderr, "loadgen: server %s\n", cfg.Server)
	}
	src, _ := source()
	rep, err := loadgen.Run(ctx, cfg, src)
	if err != nil {
		return err
	}
	cmp = loadgen.Compare(cmp.Baseline, rep)
	if err := writeComparison(stdout, cmp, *asJSON); err != nil {
		return err
	}
	if rep.OK == 0 && !rep.Interrupted {
		return errors.New("loadgen: no request succeeded")
	}
	return nil
}

func writeComparison(w io.Writer, c loadgen.Comparison, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(c)
	}
	c.WriteText(w)
	return nil
}

// flagSet is the set of flags given on the command line.
func flagSet(fs *flag.FlagSet) map[string]bool {
	set := make(map[string]bool)
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

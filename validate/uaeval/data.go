// Package uaeval measures how well the validator's user-agent rules
// separate bots from people on public data sets: for each set of bot user
// agents the share the rules reject (recall), for each set of real-traffic
// browser user agents the traffic-weighted share they reject (false
// positives), and the strings that slip through either way. It backs
// `vcdev ua-eval`.
//
// The data is not vendored: `make uadata` fetches pinned npm packages into
// the cache and checks their checksums, the way `make geo` fetches the
// country database. uaeval only reads those files; it must never change the
// rules or be used to tune them to these sets (the review's held-out set is
// a different one). Every set here is evaluation-only: none is shipped in
// validate, and the lists validate ships (Crawler-Detect's patterns, the
// in-app list from inapp-spy) are never evaluated against themselves here.
package uaeval

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/viewcount/viewcount"
)

// Pinned versions of the data sets; `make uadata` fetches these (the
// Makefile's UADATA_BOTS_VERSION and UADATA_HUMANS_VERSION must match).
const (
	// CrawlerUserAgentsVersion: npm crawler-user-agents (Martin Monperrus
	// and contributors, MIT): ~1,500 crawler patterns, each with real user
	// agents it was seen with ("instances") and tags.
	CrawlerUserAgentsVersion = "1.60.0"
	// UserAgentsVersion: npm user-agents (Intoli, BSD-2-Clause): 10,000
	// browser profiles sampled from a real site's traffic, each with its
	// share of that traffic ("weight").
	UserAgentsVersion = "2.1.198"
	// RandomUserAgentVersion: npm random-useragent (skratchdot, MIT): 822
	// user agents from useragentstring.com filed in folders; those under
	// spiders, bots, libraries, downloaders, validators and feed readers are
	// a bot set, the browser folders (mostly 2008-2016) a set of legacy
	// browsers.
	RandomUserAgentVersion = "0.5.0"
	// TopUserAgentsVersion: npm top-user-agents (microlink.io, MIT): the
	// 100 user agents most seen in requests to microlink.io's API in the
	// week of the release, most frequent first, no weights.
	TopUserAgentsVersion = "2.1.138"
	// UAPCoreVersion: Debian's uap-core package (ua-parser's regexes and
	// their test fixtures, Apache-2.0): tests/test_device.yaml, 16,111 user
	// agents of real devices, each with the device family ua-parser's
	// maintainers gave it: phones, tablets, smart TVs (HbbTV, NetCast,
	// webOS), consoles, e-readers, watches, in-app browsers and web views
	// among them; the 68 filed as "Spider" are a bot set.
	UAPCoreVersion = "0.16.0"
)

// EnvDir names the environment variable that overrides DefaultDir.
const EnvDir = "VIEWCOUNT_UADATA"

// Kind says what a data set's user agents are.
type Kind int

const (
	// Bots: every user agent in the set should be rejected.
	Bots Kind = iota + 1
	// Humans: every user agent in the set should be counted.
	Humans
)

func (k Kind) String() string {
	switch k {
	case Bots:
		return "bots"
	case Humans:
		return "humans"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Format is the layout of a data set's file.
type Format int

const (
	// CrawlerUserAgents: crawler-user-agents.json, an array of
	// {"pattern", "instances": [ua…], "tags": [tag…]}; every instance is a
	// sample of weight 1, grouped by its entry's tags.
	CrawlerUserAgents Format = iota + 1
	// IntoliUserAgents: user-agents.json, an array of {"userAgent",
	// "weight", "deviceCategory"}; every entry is a sample of its weight,
	// grouped by device category.
	IntoliUserAgents
	// RandomUserAgent: random-useragent's useragent-data.json, an array of
	// {"folder", "userAgent"}; a set of Bots takes the bot folders, a set
	// of Humans the browser folders (see folderKind), each sample of weight
	// 1, grouped by folder.
	RandomUserAgent
	// TopUserAgents: top-user-agents' index.json, an array of user agent
	// strings; every one a sample of weight 1 in one group.
	TopUserAgents
	// UAPDevices: uap-core's test_device.yaml, {test_cases: [{
	// user_agent_string, family, brand, model}]}; a set of Bots takes the
	// "Spider" family, a set of Humans every other family but "Other"
	// (unknown devices, clients that are no device), each sample of weight
	// 1 grouped by brand.
	UAPDevices
)

// Set is one data set: a file in the data directory and how to read it.
type Set struct {
	Name   string // shown in reports, e.g. "crawler-user-agents@1.60.0"
	File   string // name inside the data directory
	Kind   Kind
	Format Format
}

// Weighted reports whether the set's weights are shares of real traffic,
// so that its false-positive rate is traffic-weighted; otherwise every
// user agent counts once.
func (s Set) Weighted() bool { return s.Format == IntoliUserAgents }

// Pinned returns the data sets `make uadata` fetches, under the file names it
// gives them.
func Pinned() []Set {
	return []Set{
		{
			Name:   "crawler-user-agents@" + CrawlerUserAgentsVersion,
			File:   "crawler-user-agents-" + CrawlerUserAgentsVersion + ".json",
			Kind:   Bots,
			Format: CrawlerUserAgents,
		},
		{
			Name:   "user-agents@" + UserAgentsVersion,
			File:   "user-agents-" + UserAgentsVersion + ".json",
			Kind:   Humans,
			Format: IntoliUserAgents,
		},
		{
			Name:   "random-useragent@" + RandomUserAgentVersion + " bots",
			File:   "random-useragent-" + RandomUserAgentVersion + ".json",
			Kind:   Bots,
			Format: RandomUserAgent,
		},
		{
			Name:   "top-user-agents@" + TopUserAgentsVersion,
			File:   "top-user-agents-" + TopUserAgentsVersion + ".json",
			Kind:   Humans,
			Format: TopUserAgents,
		},
		{
			Name:   "random-useragent@" + RandomUserAgentVersion + " legacy browsers",
			File:   "random-useragent-" + RandomUserAgentVersion + ".json",
			Kind:   Humans,
			Format: RandomUserAgent,
		},
		{
			Name:   "uap-core@" + UAPCoreVersion + " devices",
			File:   "uap-core-" + UAPCoreVersion + "-test_device.yaml",
			Kind:   Humans,
			Format: UAPDevices,
		},
		{
			Name:   "uap-core@" + UAPCoreVersion + " spiders",
			File:   "uap-core-" + UAPCoreVersion + "-test_device.yaml",
			Kind:   Bots,
			Format: UAPDevices,
		},
	}
}

// folderKind says which kind of set a random-useragent folder belongs to;
// 0 for folders that are neither clearly bots nor browsers (services,
// consoles, WAP gateways, "Miscellaneous").
func folderKind(folder string) Kind {
	switch {
	case strings.HasPrefix(folder, "/Spiders"),
		strings.HasPrefix(folder, "/Miscellaneous/Bots"),
		folder == "/Miscellaneous/Downloaders",
		folder == "/Miscellaneous/Validators",
		folder == "/Miscellaneous/Feed Readers",
		folder == "/Miscellaneous/Libraries":
		return Bots
	case strings.HasPrefix(folder, "/Browsers"),
		strings.HasPrefix(folder, "/Miscellaneous/Browsers"),
		folder == "/Mobile Devices/Browsers",
		strings.HasPrefix(folder, "/Mobile Devices/Devices/"),
		strings.HasPrefix(folder, "/Mobile Devices/OS/"):
		return Humans
	}
	return 0
}

// DefaultDir is where `make uadata` puts the pinned sets: $VIEWCOUNT_UADATA
// if set, else $XDG_CACHE_HOME/viewcount/uadata (~/.cache when
// XDG_CACHE_HOME is unset). Empty if no cache directory is known.
func DefaultDir() string {
	if d := os.Getenv(EnvDir); d != "" {
		return d
	}
	return viewcount.CacheDir("uadata")
}

// ErrMissing: a data set's file is not in the data directory (`make
// uadata` has not run, or fetched other versions).
var ErrMissing = errors.New("uaeval: data set missing")

// Sample is one user agent of a data set.
type Sample struct {
	UA     string
	Weight float64  // 1 for bots; the share of traffic for humans
	Groups []string // tags or device category; never empty
}

// read streams the samples of r in the given format to fn, one array
// element decoded at a time, so memory stays that of one element whatever
// the file's size. kind picks a RandomUserAgent file's folders.
func read(r io.Reader, format Format, kind Kind, fn func(Sample)) error {
	if format == UAPDevices {
		return readUAP(r, kind, fn)
	}
	dec := json.NewDecoder(r)
	if tok, err := dec.Token(); err != nil {
		return fmt.Errorf("reading the opening bracket: %w", err)
	} else if d, ok := tok.(json.Delim); !ok || d != '[' {
		return fmt.Errorf("want a JSON array, got %v", tok)
	}
	for i := 0; dec.More(); i++ {
		switch format {
		case CrawlerUserAgents:
			var e struct {
				Instances []string `json:"instances"`
				Tags      []string `json:"tags"`
			}
			if err := dec.Decode(&e); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
			groups := e.Tags
			if len(groups) == 0 {
				groups = []string{"(untagged)"}
			}
			for _, ua := range e.Instances {
				fn(Sample{UA: ua, Weight: 1, Groups: groups})
			}
		case IntoliUserAgents:
			var e struct {
				UserAgent      string  `json:"userAgent"`
				Weight         float64 `json:"weight"`
				DeviceCategory string  `json:"deviceCategory"`
			}
			if err := dec.Decode(&e); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
			if e.Weight < 0 {
				return fmt.Errorf("element %d: negative weight %v", i, e.Weight)
			}
			g := strings.ToLower(e.DeviceCategory)
			if g == "" {
				g = "(unknown)"
			}
			fn(Sample{UA: e.UserAgent, Weight: e.Weight, Groups: []string{g}})
		case RandomUserAgent:
			var e struct {
				Folder    string `json:"folder"`
				UserAgent string `json:"userAgent"`
			}
			if err := dec.Decode(&e); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
			if folderKind(e.Folder) == kind {
				fn(Sample{UA: e.UserAgent, Weight: 1, Groups: []string{strings.TrimPrefix(e.Folder, "/")}})
			}
		case TopUserAgents:
			var ua string
			if err := dec.Decode(&ua); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
			fn(Sample{UA: ua, Weight: 1, Groups: []string{"top-100"}})
		default:
			return fmt.Errorf("unknown format %d", format)
		}
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("reading the closing bracket: %w", err)
	}
	return nil
}

// readUAP reads uap-core's test_device.yaml (3 MB, decoded whole).
func readUAP(r io.Reader, kind Kind, fn func(Sample)) error {
	var doc struct {
		TestCases []struct {
			UA     string `yaml:"user_agent_string"`
			Family string `yaml:"family"`
			Brand  string `yaml:"brand"`
		} `yaml:"test_cases"`
	}
	b, err := io.ReadAll(io.LimitReader(r, 64<<20))
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return err
	}
	if len(doc.TestCases) == 0 {
		return errors.New("no test_cases")
	}
	for _, c := range doc.TestCases {
		spider := c.Family == "Spider"
		if spider != (kind == Bots) || !spider && c.Family == "Other" {
			continue
		}
		g := c.Brand
		if spider {
			g = "Spider"
		} else if g == "" {
			g = "(no brand)"
		}
		fn(Sample{UA: c.UA, Weight: 1, Groups: []string{g}})
	}
	return nil
}

// readFile is read on dir/set.File; a missing file is ErrMissing.
func readFile(dir string, set Set, fn func(Sample)) error {
	path := filepath.Join(dir, set.File)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: %s: %s (run `make uadata`)", ErrMissing, set.Name, path)
	}
	if err != nil {
		return fmt.Errorf("uaeval: %s: %w", set.Name, err)
	}
	defer f.Close()
	if err := read(f, set.Format, set.Kind, fn); err != nil {
		return fmt.Errorf("uaeval: %s: %s: %w", set.Name, path, err)
	}
	return nil
}

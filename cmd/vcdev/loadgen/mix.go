package loadgen

import (
	"errors"
	"fmt"
	"net/netip"
	"time"
)

// Mix describes the traffic of one round: Duration of event time in which
// each count below is met exactly. A Generator repeats rounds with fresh
// visitors, so the stream's class proportions are the round's.
type Mix struct {
	Sites        []string // registered sites, chosen uniformly per visitor
	UnknownSites []string // sites that are not registered
	Pages        int      // page catalogue size
	ZipfS        float64  // Zipf exponent (> 1) of page popularity
	HotPage      bool     // every hit is on one page (each human views it once)
	Duration     time.Duration

	Visitors    int     // human visitors per round, each viewing 1–6 distinct pages
	BeaconShare float64 // share of human-like visitors sending beacons (the rest, pixels)
	ReloadShare float64 // share of human visitors who reload one page (class Reload)
	RetryShare  float64 // share of human visitors one of whose hits is re-sent (Retry)

	// Hits per round of each invalid class.
	Bots, Headless, BadHints, Datacenter, Spam, UnknownSite int
	FloodHits                                               int // one visitor's hits on distinct pages within a minute (0: no flood)
	FarmHits                                                int // one /24's hits, each a different UA and IP (0: no farm)

	DatacenterCIDRs []netip.Prefix // where Datacenter hits come from; humans avoid them
	// Hosting reports an address of a hosting or cloud network, which the
	// server judges datacenter by its AS number: humans avoid those too.
	// nil: no such networks (a server without AS-number data).
	Hosting       func(netip.Addr) bool
	SpamReferrers []string

	// RunID, when set, goes into every event id, so runs with different
	// seeds against one server do not collide as retries.
	RunID string
}

// DefaultMix is an hour of a small site: ~2,600 human views among ~4,300 hits.
func DefaultMix() Mix {
	return Mix{
		Sites:        []string{"load.example"},
		UnknownSites: []string{"not-registered.example"},
		Pages:        500,
		ZipfS:        1.1,
		Duration:     time.Hour,
		Visitors:     1000,
		BeaconShare:  0.85,
		ReloadShare:  0.05,
		RetryShare:   0.02,
		Bots:         600,
		Headless:     100,
		BadHints:     100,
		Datacenter:   150,
		Spam:         50,
		UnknownSite:  50,
		FloodHits:    300,
		FarmHits:     300,
		DatacenterCIDRs: []netip.Prefix{
			netip.MustParsePrefix("3.208.0.0/12"),     // AWS us-east-1
			netip.MustParsePrefix("34.64.0.0/10"),     // Google Cloud
			netip.MustParsePrefix("20.33.0.0/16"),     // Azure
			netip.MustParsePrefix("104.131.0.0/16"),   // DigitalOcean
			netip.MustParsePrefix("88.198.0.0/16"),    // Hetzner
			netip.MustParsePrefix("51.68.0.0/16"),     // OVH
			netip.MustParsePrefix("45.32.0.0/16"),     // Vultr
			netip.MustParsePrefix("2600:1f18::/33"),   // AWS us-east-1 IPv6
			netip.MustParsePrefix("139.162.0.0/16"),   // Linode
			netip.MustParsePrefix("172.104.0.0/15"),   // Linode
			netip.MustParsePrefix("159.203.0.0/16"),   // DigitalOcean
			netip.MustParsePrefix("185.220.100.0/22"), // Tor exits at a hoster
		},
		SpamReferrers: []string{
			"https://semalt.com/", "https://buttons-for-website.com/", "https://darodar.com/",
			"https://best-seo-offer.com/", "https://free-social-buttons.com/", "https://get-free-traffic-now.com/",
		},
	}
}

// HumanMix is DefaultMix with only human first views: no reloads, retries or
// invalid classes.
func HumanMix() Mix {
	m := DefaultMix()
	m.ReloadShare, m.RetryShare = 0, 0
	m.Bots, m.Headless, m.BadHints, m.Datacenter, m.Spam, m.UnknownSite, m.FloodHits, m.FarmHits = 0, 0, 0, 0, 0, 0, 0, 0
	return m
}

// sessionSpan bounds one visitor's session (7 views and a retry, gaps of at
// most two minutes, a reload up to three minutes later), so a round of
// Duration holds all of its sessions.
const sessionSpan = 20 * time.Minute

// Validate reports the first problem with the mix.
func (m Mix) Validate() error {
	switch {
	case len(m.Sites) == 0:
		return errors.New("loadgen: mix: no sites")
	case m.UnknownSite > 0 && len(m.UnknownSites) == 0:
		return errors.New("loadgen: mix: UnknownSite hits but no UnknownSites")
	case m.Pages < 1:
		return errors.New("loadgen: mix: Pages must be at least 1")
	case m.ZipfS <= 1:
		return errors.New("loadgen: mix: ZipfS must be > 1")
	case m.Duration < sessionSpan+time.Minute:
		return fmt.Errorf("loadgen: mix: Duration must be at least %v", sessionSpan+time.Minute)
	case m.Visitors < 0 || m.Bots < 0 || m.Headless < 0 || m.BadHints < 0 || m.Datacenter < 0 ||
		m.Spam < 0 || m.UnknownSite < 0 || m.FloodHits < 0 || m.FarmHits < 0:
		return errors.New("loadgen: mix: negative count")
	case m.FarmHits > maxFarmHits:
		return fmt.Errorf("loadgen: mix: FarmHits must be at most %d", maxFarmHits)
	case m.Datacenter > 0 && len(m.DatacenterCIDRs) == 0:
		return errors.New("loadgen: mix: Datacenter hits but no DatacenterCIDRs")
	case m.Spam > 0 && len(m.SpamReferrers) == 0:
		return errors.New("loadgen: mix: Spam hits but no SpamReferrers")
	}
	for _, s := range []float64{m.BeaconShare, m.ReloadShare, m.RetryShare} {
		if s < 0 || s > 1 {
			return errors.New("loadgen: mix: shares must be within [0, 1]")
		}
	}
	if m.Visitors+m.Bots+m.Headless+m.BadHints+m.Datacenter+m.Spam+m.UnknownSite+m.FloodHits+m.FarmHits == 0 {
		return errors.New("loadgen: mix: no traffic")
	}
	for _, p := range m.DatacenterCIDRs {
		if !p.IsValid() {
			return errors.New("loadgen: mix: invalid datacenter prefix")
		}
	}
	return nil
}

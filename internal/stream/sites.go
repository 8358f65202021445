package stream

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
)

// maxHostHistory bounds the versions of a site's hostnames kept: a view is
// judged by the version in force when it came, and views older than the
// oldest version kept (16 changes ago) are judged by that one (its Since
// is then zero).
const maxHostHistory = 16

// registration is what the in-memory registry keeps of a site: the start
// of its registration and its hostnames' versions, the default first.
type registration struct {
	created time.Time
	hosts   []viewcount.Hostnames
	engaged time.Duration       // viewcount.Site.Engaged
	mode    viewcount.CountMode // viewcount.Site.CountMode
	rev     uint64              // the bucket revision it was read from (Sites.applied)
}

func newRegistration(domain string, site viewcount.Site) registration {
	hosts := make([]viewcount.Hostnames, 0, 1+len(site.Hosts))
	hosts = append(hosts, viewcount.Hostnames{Hosts: viewcount.DefaultHostnames(domain)})
	return registration{created: site.Created, hosts: append(hosts, site.Hosts...), engaged: site.Engaged(), mode: site.CountMode}
}

// hostsAt is the version of the hostnames in force at t: the newest that
// began at or before it, else the default.
func (r registration) hostsAt(t time.Time) []string {
	for i := len(r.hosts) - 1; i > 0; i-- {
		if !t.Before(r.hosts[i].Since) {
			return r.hosts[i].Hosts
		}
	}
	return r.hosts[0].Hosts
}

// Sites is the site registry. Every role process holds one; a watch on the
// bucket keeps the in-memory set current, so Known and Registered are map
// lookups and all processes converge on the same registry within
// milliseconds.
type Sites struct {
	kv      jetstream.KeyValue
	watcher jetstream.KeyWatcher
	done    chan struct{}
	now     func() time.Time
	randN   func(n int64) int64 // uniform in [0, n): the jitter of modify's backoff

	admin chan struct{} // one token: this process's changes, one at a time (modify)

	mu    sync.RWMutex
	known map[string]registration // domain → its registration

	// fence orders this process's inserts against its deletions: a Writer
	// holds it (Hold) from checking a batch against the registry until the
	// batch is in the store, and Delete takes it to remove a site. So once
	// Delete returns, every batch checked while the site was still here is
	// stored, where the deletion of the site's rows that follows finds it,
	// and every later batch sees the site gone.
	fence sync.RWMutex
}

// OpenSites loads the registry and starts watching it; Close stops the
// watch. now dates registrations (nil: time.Now): it must be the clock
// ingest dates events with, since views received before a registration's
// Created never count for it.
func OpenSites(ctx context.Context, c *Conn, now func() time.Time) (*Sites, error) {
	kv, err := c.KV(ctx, viewcount.BucketSites)
	if err != nil {
		return nil, err
	}
	w, err := kv.WatchAll(context.Background())
	if err != nil {
		return nil, fmt.Errorf("sites: watch: %w", err)
	}
	if now == nil {
		now = time.Now
	}
	s := &Sites{kv: kv, watcher: w, done: make(chan struct{}), now: now,
		randN: mathrand.Int64N, admin: make(chan struct{}, 1), known: map[string]registration{}}
	// The watch delivers every current key, then a nil marker. Waiting for
	// it means a validator never judges against a half-loaded registry.
	for initial := true; initial; {
		select {
		case e := <-w.Updates():
			if e == nil {
				initial = false
				continue
			}
			s.apply(e)
		case <-ctx.Done():
			_ = w.Stop()
			return nil, fmt.Errorf("sites: initial load: %w", ctx.Err())
		}
	}
	go s.follow()
	return s, nil
}

// follow applies updates until the watcher is stopped. Owned by Sites; Close
// ends it.
func (s *Sites) follow() {
	defer close(s.done)
	for e := range s.watcher.Updates() {
		if e != nil {
			s.apply(e)
		}
	}
}

func (s *Sites) apply(e jetstream.KeyValueEntry) {
	var site viewcount.Site
	if e.Operation() == jetstream.KeyValuePut {
		// An entry that does not decode still registers its site, with no
		// start (as before registrations had one) and the default
		// hostnames: Get reports the damage.
		if json.Unmarshal(e.Value(), &site) != nil {
			site = viewcount.Site{}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.Operation() == jetstream.KeyValuePut {
		r := newRegistration(e.Key(), site)
		r.rev = e.Revision()
		s.known[e.Key()] = r
	} else {
		delete(s.known, e.Key())
	}
}

// Known reports whether domain (already normalised) is registered.
func (s *Sites) Known(domain string) bool {
	_, ok := s.Registered(domain)
	return ok
}

// Registered returns when domain's current registration was made; ok is
// false when it is not registered (viewcount.Registrations).
func (s *Sites) Registered(domain string) (since time.Time, ok bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, ok := s.known[domain]
	return r.created, ok
}

// applied waits until the watch has applied domain's entry at revision rev
// or later: a change this process made is then what its own validators
// judge by (a view received after a hostname change's Since must never be
// judged by the list before it, or a replay would judge it otherwise).
func (s *Sites) applied(ctx context.Context, domain string, rev uint64) error {
	for {
		s.mu.RLock()
		r, ok := s.known[domain]
		s.mu.RUnlock()
		if ok && r.rev >= rev {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("sites: %s: change not applied by the watch: %w", domain, ctx.Err())
		case <-s.done:
			return fmt.Errorf("sites: %s: watch stopped", domain)
		case <-time.After(time.Millisecond):
		}
	}
}

// Counting is what domain's public counts count and its engaged-view
// threshold, from the watched registry (no round trip: the counts and
// the stats ask on every read); the defaults for a site not registered.
func (s *Sites) Counting(domain string) (mode viewcount.CountMode, engagedAfter time.Duration) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if r, ok := s.known[domain]; ok {
		return r.mode, r.engaged
	}
	return viewcount.CountViews, viewcount.DefaultEngagedAfter
}

// AllowsHost reports whether a view of domain received at t from a page on
// host may count: the site's hostnames in force at t allow it
// (viewcount.HostLookup). False for a site not registered.
func (s *Sites) AllowsHost(domain, host string, t time.Time) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, ok := s.known[domain]
	return ok && viewcount.HostAllowed(r.hostsAt(t), host)
}

// Quiesce waits until every Hold taken before it is released: for a
// site's deletion, between deleting its views_raw rows and its rollup
// rows, so a feed in flight that read the former has put them into the
// rollups by then, where the deletion finds them.
func (s *Sites) Quiesce() {
	s.fence.Lock()
	//lint:ignore SA2001 an empty critical section: waiting for the holds is the point
	s.fence.Unlock()
}

// Hold keeps this process's Delete from removing any site until release
// is called (see Sites.fence): for a Writer, from checking a batch's
// verdicts against the registry until the batch is stored. Holds are
// shared; a waiting Delete holds off new ones.
func (s *Sites) Hold() (release func()) {
	s.fence.RLock()
	return s.fence.RUnlock
}

// Add registers a site and returns its token, shown to the caller once.
// It returns viewcount.ErrSiteExists if the domain is already registered and
// viewcount.ErrBadSite for a name that is not a public host name
// (viewcount.CheckRegistrable).
func (s *Sites) Add(ctx context.Context, domain string) (site viewcount.Site, token string, err error) {
	domain, err = viewcount.CheckRegistrable(domain)
	if err != nil {
		return viewcount.Site{}, "", err
	}
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return viewcount.Site{}, "", fmt.Errorf("sites: token: %w", err)
	}
	token = "vcs_" + hex.EncodeToString(raw)
	site = viewcount.Site{Domain: domain, TokenHash: viewcount.HashToken(token), Created: s.now().UTC().Truncate(time.Millisecond)}
	b, err := json.Marshal(site)
	if err != nil {
		return viewcount.Site{}, "", fmt.Errorf("sites: encode: %w", err)
	}
	if _, err := s.kv.Create(ctx, domain, b); err != nil {
		if errors.Is(err, jetstream.ErrKeyExists) {
			return viewcount.Site{}, "", fmt.Errorf("%w: %s", viewcount.ErrSiteExists, domain)
		}
		return viewcount.Site{}, "", fmt.Errorf("sites: store %s: %w", domain, err)
	}
	// Seen locally at once, so a hit right after registration is not judged
	// against a registry that has not heard of the site yet.
	s.mu.Lock()
	s.known[domain] = newRegistration(domain, site)
	s.mu.Unlock()
	return site, token, nil
}

// Get returns a registered site or viewcount.ErrSiteUnknown.
func (s *Sites) Get(ctx context.Context, domain string) (viewcount.Site, error) {
	e, err := s.kv.Get(ctx, domain)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return viewcount.Site{}, fmt.Errorf("%w: %s", viewcount.ErrSiteUnknown, domain)
	}
	if err != nil {
		return viewcount.Site{}, fmt.Errorf("sites: get %s: %w", domain, err)
	}
	var site viewcount.Site
	if err := json.Unmarshal(e.Value(), &site); err != nil {
		return viewcount.Site{}, fmt.Errorf("sites: decode %s: %w", domain, err)
	}
	return site, nil
}

// Close stops the watch.
func (s *Sites) Close() {
	_ = s.watcher.Stop()
	<-s.done
}

package stream

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
)

// Token prefixes say what a token is when one turns up in a paste or a
// secret scanner: vcs_ a site's (read and write) token, vcr_ a read-only
// share token.
const (
	siteTokenPrefix  = "vcs_"
	shareTokenPrefix = "vcr_"
)

// Backoff between the tries of modify after a lost race: full jitter (a
// random wait below a bound that doubles from updateBackoffMin up to
// updateBackoffMax), so registries that collided once do not collide
// again in lockstep. There is no bound on the tries: a lost race means
// another change went in, so the registry as a whole always progresses,
// and with jitter one writer losing every time is vanishingly unlikely;
// the caller's context bounds the wait.
const (
	updateBackoffMin = time.Millisecond
	updateBackoffMax = 100 * time.Millisecond
)

// List returns every registered site, sorted by domain, read from the
// bucket (not the watch's cache) so it is the registry as stored now.
func (s *Sites) List(ctx context.Context) ([]viewcount.Site, error) {
	w, err := s.kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, fmt.Errorf("sites: list: %w", err)
	}
	defer func() { _ = w.Stop() }()
	var sites []viewcount.Site
	for {
		select {
		case e := <-w.Updates():
			if e == nil { // the current entries are all delivered
				sort.Slice(sites, func(i, j int) bool { return sites[i].Domain < sites[j].Domain })
				return sites, nil
			}
			var site viewcount.Site
			if err := json.Unmarshal(e.Value(), &site); err != nil {
				return nil, fmt.Errorf("sites: decode %s: %w", e.Key(), err)
			}
			sites = append(sites, site)
		case <-ctx.Done():
			return nil, fmt.Errorf("sites: list: %w", ctx.Err())
		}
	}
}

// RotateToken gives the site a new token and returns it; the old one stops
// working at once, since every token check reads the bucket (Get), never a
// cache. The site's share link is revoked in the same update unless
// keepShare: a link made by whoever held the old token must not outlive
// it (a rotation is how a leaked token is locked out). shared says whether
// the site had a link (revoked, or kept). viewcount.ErrSiteUnknown if the
// site is not registered.
func (s *Sites) RotateToken(ctx context.Context, domain string, keepShare bool) (token string, shared bool, err error) {
	token, err = newToken(siteTokenPrefix)
	if err != nil {
		return "", false, err
	}
	_, err = s.modify(ctx, domain, func(site *viewcount.Site) error {
		site.TokenHash = viewcount.HashToken(token)
		shared = site.ShareHash != ""
		if !keepShare {
			site.ShareHash = ""
		}
		return nil
	})
	if err != nil {
		return "", false, err
	}
	return token, shared, nil
}

// SetTimezone sets the IANA zone the site's day buckets follow ("UTC" is
// stored as "", the default) and returns the site as stored. Errors:
// viewcount.ErrBadTimezone for a name time.LoadLocation does not know
// (viewcount.CheckTimezone), viewcount.ErrSiteUnknown if the site is not
// registered.
func (s *Sites) SetTimezone(ctx context.Context, domain, zone string) (viewcount.Site, error) {
	if err := viewcount.CheckTimezone(zone); err != nil {
		return viewcount.Site{}, err
	}
	if zone == "UTC" {
		zone = ""
	}
	return s.modify(ctx, domain, func(site *viewcount.Site) error {
		site.Timezone = zone
		return nil
	})
}

// SetEmbedOrigins sets the origins allowed to frame the site's dashboard
// (viewcount.CheckEmbedOrigins checks and normalises them; none: no
// frame may) and returns the site as stored. Errors: a wrapped
// viewcount.ErrBadEmbedOrigin, viewcount.ErrSiteUnknown.
func (s *Sites) SetEmbedOrigins(ctx context.Context, domain string, origins []string) (viewcount.Site, error) {
	origins, err := viewcount.CheckEmbedOrigins(origins)
	if err != nil {
		return viewcount.Site{}, err
	}
	return s.modify(ctx, domain, func(site *viewcount.Site) error {
		site.EmbedOrigins = origins
		if len(origins) == 0 {
			site.EmbedOrigins = nil
		}
		return nil
	})
}

// SetEngagement sets the site's engaged-view threshold (seconds, one of
// viewcount.EngagedBuckets; 0 keeps it) and public count mode (nil keeps
// it) and returns the site as stored. The default threshold is stored as
// 0. Errors: the check's, viewcount.ErrSiteUnknown.
func (s *Sites) SetEngagement(ctx context.Context, domain string, engagedAfter int, mode *viewcount.CountMode) (viewcount.Site, error) {
	if engagedAfter != 0 {
		if err := viewcount.CheckEngagedAfter(engagedAfter); err != nil {
			return viewcount.Site{}, err
		}
	}
	return s.modify(ctx, domain, func(site *viewcount.Site) error {
		if engagedAfter != 0 {
			site.EngagedAfter = engagedAfter
			if time.Duration(engagedAfter)*time.Second == viewcount.DefaultEngagedAfter {
				site.EngagedAfter = 0
			}
		}
		if mode != nil {
			site.CountMode = *mode
		}
		return nil
	})
}

// SetHostnames sets the page hosts the site's views may come from
// (viewcount.CheckHostnames checks and normalises them) and returns the
// site as stored. The list applies to views received from now on (the
// registry's clock): views received before are judged by the list then
// in force, however late, so a replay judges them alike. Setting the list
// in force changes nothing. Errors: a wrapped viewcount.ErrBadHostname,
// viewcount.ErrSiteUnknown.
func (s *Sites) SetHostnames(ctx context.Context, domain string, hosts []string) (viewcount.Site, error) {
	hosts, err := viewcount.CheckHostnames(hosts)
	if err != nil {
		return viewcount.Site{}, err
	}
	site, err := s.modify(ctx, domain, func(site *viewcount.Site) error {
		if slices.Equal(site.Hostnames(), hosts) {
			return nil
		}
		since := s.now().UTC().Truncate(time.Millisecond)
		if n := len(site.Hosts); n > 0 && !since.After(site.Hosts[n-1].Since) {
			since = site.Hosts[n-1].Since.Add(time.Millisecond) // versions strictly in order
		}
		site.Hosts = append(site.Hosts, viewcount.Hostnames{Since: since, Hosts: hosts})
		if n := len(site.Hosts); n > maxHostHistory {
			site.Hosts = slices.Clone(site.Hosts[n-maxHostHistory:])
			site.Hosts[0].Since = time.Time{} // now stands for all that came before
		}
		return nil
	})
	if err != nil {
		return viewcount.Site{}, err
	}
	// In force here at once, as Add is, without waiting for the watch.
	s.mu.Lock()
	if _, ok := s.known[domain]; ok {
		s.known[domain] = newRegistration(domain, site)
	}
	s.mu.Unlock()
	return site, nil
}

// CreateShare makes a new read-only share token for the site and returns
// it. A site has at most one: a new one replaces (and so revokes) the one
// before. Only its hash is stored, as for the site token.
func (s *Sites) CreateShare(ctx context.Context, domain string) (string, error) {
	token, err := newToken(shareTokenPrefix)
	if err != nil {
		return "", err
	}
	_, err = s.modify(ctx, domain, func(site *viewcount.Site) error {
		site.ShareHash = viewcount.HashToken(token)
		return nil
	})
	if err != nil {
		return "", err
	}
	return token, nil
}

// RevokeShare removes the site's share token, if any; links holding it
// stop working at once.
func (s *Sites) RevokeShare(ctx context.Context, domain string) error {
	_, err := s.modify(ctx, domain, func(site *viewcount.Site) error {
		site.ShareHash = ""
		return nil
	})
	return err
}

// Delete removes the site from the registry (its data in the store is the
// caller's to delete, after Delete returns). The entry is purged, not just
// marked deleted, so no token hash stays in the bucket's history. A view
// in flight (in the stream, held for settling, in a batch not yet stored)
// counts for no registration after this: it is judged or re-checked
// unknown_site, and a later Add starts a new registration that views
// received before it never count for (viewcount.InRegistration). Delete
// first waits for this process's batches being stored (Hold).
// viewcount.ErrSiteUnknown if the site is not registered.
func (s *Sites) Delete(ctx context.Context, domain string) error {
	e, err := s.kv.Get(ctx, domain)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("%w: %s", viewcount.ErrSiteUnknown, domain)
	}
	if err != nil {
		return fmt.Errorf("sites: get %s: %w", domain, err)
	}
	// Batches this process's writers checked against the registry while
	// the site was here are stored before it goes (see Sites.fence).
	s.fence.Lock()
	defer s.fence.Unlock()
	// Purge whatever revision is current: a change that raced in just
	// before would be deleted with the site anyway.
	if err := s.kv.Purge(ctx, domain); err != nil {
		return fmt.Errorf("sites: delete %s (revision %d): %w", domain, e.Revision(), err)
	}
	// Forgotten locally at once, as Add records at once: this process's
	// validators judge the site's next hit unknown_site without waiting
	// for the watch.
	s.mu.Lock()
	delete(s.known, domain)
	s.mu.Unlock()
	return nil
}

// modify applies change to the stored site with a compare-and-set on the
// entry's revision, retrying on a lost race, so two admins changing one
// site at once (a rotation and a time zone, say) never undo each other.
// This process's changes are serialized (s.admin), so races are lost only
// to other processes; the retries, jittered, last as long as ctx.
func (s *Sites) modify(ctx context.Context, domain string, change func(*viewcount.Site) error) (viewcount.Site, error) {
	select {
	case s.admin <- struct{}{}:
		defer func() { <-s.admin }()
	case <-ctx.Done():
		return viewcount.Site{}, fmt.Errorf("sites: update %s: %w", domain, ctx.Err())
	}
	for lost := 0; ; lost++ {
		if lost > 0 {
			t := time.NewTimer(s.backoff(lost))
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return viewcount.Site{}, fmt.Errorf("sites: update %s: lost %d races with concurrent changes: %w", domain, lost, ctx.Err())
			}
		}
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
		if err := change(&site); err != nil {
			return viewcount.Site{}, err
		}
		b, err := json.Marshal(site)
		if err != nil {
			return viewcount.Site{}, fmt.Errorf("sites: encode %s: %w", domain, err)
		}
		rev, err := s.kv.Update(ctx, domain, b, e.Revision())
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			continue
		}
		if err != nil {
			return viewcount.Site{}, fmt.Errorf("sites: update %s: %w", domain, err)
		}
		return site, s.applied(ctx, domain, rev)
	}
}

// backoff is the wait before the try after the lost-th lost race: uniform
// in [0, bound), the bound doubling from updateBackoffMin per lost race up
// to updateBackoffMax.
func (s *Sites) backoff(lost int) time.Duration {
	bound := min(updateBackoffMin<<min(lost-1, 10), updateBackoffMax)
	return time.Duration(s.randN(int64(bound)))
}

func newToken(prefix string) (string, error) {
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("sites: token: %w", err)
	}
	return prefix + hex.EncodeToString(raw), nil
}

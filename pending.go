package viewcount

import "time"

// PendingKey is a site's page ("" for the site as a whole).
type PendingKey struct{ Site, Page string }

// Pending is what the counts do not include yet (validate.PendingCounter
// says which events those are).
type Pending struct {
	// Events counts them per site and page, and per site under page "".
	Events map[PendingKey]uint64
	// Oldest is the receive time of the oldest of them, per site that has
	// any: the age of a site's oldest is how far its counting is behind,
	// and a site absent here is not behind at all.
	Oldest map[string]time.Time
}

// NewPending returns an empty Pending.
func NewPending() Pending {
	return Pending{Events: map[PendingKey]uint64{}, Oldest: map[string]time.Time{}}
}

// Add counts n events of site and page, the oldest received at oldest.
func (p Pending) Add(site, page string, n uint64, oldest time.Time) {
	if n == 0 {
		return
	}
	p.Events[PendingKey{site, page}] += n
	p.Events[PendingKey{Site: site}] += n
	p.Since(site, oldest)
}

// Since notes that site has an event pending received at t.
func (p Pending) Since(site string, t time.Time) {
	if o, ok := p.Oldest[site]; !ok || t.Before(o) {
		p.Oldest[site] = t
	}
}

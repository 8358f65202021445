package ingest

import (
	"context"
	"net/netip"
	"time"

	"github.com/viewcount/viewcount"
)

// What a client is told of a bad type or engagement number, the same
// whether its JSON held the wrong type (jsonError) or a value out of range
// (Handler.event): docs/engagement.md's wording.
const (
	wantType    = `must be "view" or "engagement"`
	wantMS      = "must be a whole number from 0 to 86400000" // viewcount.MaxEngagedMS (TestEngagementBadInput)
	wantPercent = "must be a whole number from 0 to 100"
)

// kind is the kind of event the hit's type names; ok is false for any
// type but these (an allow-list: a misspelt type is a client's bug to
// show).
func (h *Hit) kind() (kind viewcount.Kind, ok bool) {
	if h.Report == nil {
		return viewcount.KindView, true
	}
	switch h.Report.Type {
	case "", "view":
		return viewcount.KindView, true
	case "engagement":
		return viewcount.KindEngagement, true
	}
	return 0, false
}

// engagementWant is the wording of a bad value of the beacon field name, ""
// for a field that is not one of the engagement's.
func engagementWant(name string) string {
	switch name {
	case "type":
		return wantType
	case "engaged_ms", "age_ms":
		return wantMS
	case "scroll":
		return wantPercent
	}
	return ""
}

// engagementField names the first engagement number the hit carries, ""
// if none: a view must carry none.
func (h *Hit) engagementField() string {
	switch r := h.Report; {
	case r == nil:
	case r.EngagedMS.Set:
		return "engaged_ms"
	case r.Scroll.Set:
		return "scroll"
	case r.AgeMS.Set:
		return "age_ms"
	}
	return ""
}

// engagement checks an engagement report's numbers (docs/engagement.md):
// engaged_ms required, scroll and age_ms 0 when absent, all within range.
// The hit is an engagement's (kind), so it has a Report.
func (h *Hit) engagement(field func(int) string, i int) (viewcount.Engagement, error) {
	r := h.Report
	if !r.EngagedMS.Set {
		return viewcount.Engagement{}, badInput("%sengaged_ms: required for an engagement", field(i))
	}
	for _, n := range [...]struct {
		name string
		v    int64
		max  int64
	}{{"engaged_ms", r.EngagedMS.V, viewcount.MaxEngagedMS}, {"scroll", r.Scroll.V, 100}, {"age_ms", r.AgeMS.V, viewcount.MaxEngagedMS}} {
		if n.v < 0 || n.v > n.max {
			return viewcount.Engagement{}, badInput("%s%s: %s", field(i), n.name, engagementWant(n.name))
		}
	}
	return viewcount.Engagement{EngagedMS: uint32(r.EngagedMS.V), Scroll: uint8(r.Scroll.V), AgeMS: uint32(r.AgeMS.V)}, nil
}

// dayIDs are a client's keyed ids under one day's salt: its network id and
// the partition key a visitor id carries in its low 32 bits (NetworkKey),
// the /24's network id or the /32's block id.
type dayIDs struct {
	day          int64 // dayOf
	salt         []byte
	network, key uint64
}

func idsOf(day int64, salt []byte, ip netip.Addr) dayIDs {
	ids := dayIDs{day: day, salt: salt}
	if ip.IsValid() {
		ids.network = NetworkID(salt, ip)
		ids.key = ids.network
		if !ip.Unmap().Is4() {
			ids.key = BlockID(salt, ip)
		}
	}
	return ids
}

// viewDay is the ids an engagement report gets: those of the UTC day its
// view was sent (now − age), so that a report arriving after 00:00 UTC for
// a view of the day before has its view's visitor id and partition, and
// the validator holding the view judges it (docs/engagement.md).
// Handler.event bounds the age by MaxEngagedMS, a day, so that day is
// today or yesterday, whose salt Salts keeps; earlier holds yesterday's ids
// for the request's other events. The age is the client's word: a wrong
// one only misroutes its own report, which then matches no view.
func (h *Handler) viewDay(ctx context.Context, now time.Time, e *viewcount.Event, ip netip.Addr, today, earlier *dayIDs) (*dayIDs, error) {
	sent := now.Add(-time.Duration(e.Engagement.AgeMS) * time.Millisecond)
	day := dayOf(sent)
	switch {
	case day == today.day:
		return today, nil
	case earlier.salt != nil && earlier.day == day:
		return earlier, nil
	}
	salt, ok, err := h.salts.Existing(ctx, sent)
	if err != nil {
		return nil, err
	}
	if !ok {
		// The view's salt is gone (deleted, or never made: no view that
		// day): its visitor id cannot be computed any more, which is what
		// deleting it is for. Today's ids make the report an orphan, as it
		// would be anyway, on the partition its client's views go to now.
		return today, nil
	}
	*earlier = idsOf(day, salt, ip)
	return earlier, nil
}

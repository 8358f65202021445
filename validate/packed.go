package validate

import (
	"time"

	"github.com/viewcount/viewcount"
)

// A held verdict is kept packed: its scalars in a struct without pointers,
// its strings in one byte arena. The garbage collector never scans either.
// At 20k views/s the settle window holds on the order of 100k verdicts;
// kept as viewcount.Verdict they were 25 string headers and ~10 separately
// allocated strings each, which every mark phase walked, and mark phases
// of 400-740 ms were where the pixel's p90 went
// (docs/benchmarks/history/issue-25.md, "Held verdicts and visits without
// pointers"). Packing costs a copy of the strings on hold and one
// allocation on release, for the verdicts held only.

// nStrings and nTimes are how many string and time fields a Verdict has;
// verdictFields lists them, Site and Page first.
const (
	nStrings  = 25
	nTimes    = 3
	fieldSite = 0
	fieldPage = 1
)

// verdictFields lists the string and time fields of v: the one place
// pack and unpack learn them from. TestPackedVerdictRoundTrip fills every
// field of a Verdict by reflection, so one added without being listed here
// (or copied in packScalars) fails it.
func verdictFields(v *viewcount.Verdict) ([nStrings]*string, [nTimes]*time.Time) {
	return [nStrings]*string{
			&v.Site, &v.Page, &v.Referrer, &v.UA, &v.ID,
			&v.UTM.Source, &v.UTM.Medium, &v.UTM.Campaign, &v.Country, &v.Origin,
			(*string)(&v.Reason), &v.Rules,
			&v.Dims.RefHost, &v.Dims.RefSource, &v.Dims.Browser, &v.Dims.OS, &v.Dims.Device, &v.Dims.Screen,
			&v.Visit.EntryPage, &v.Visit.EntryRefHost, &v.Visit.EntryRefSource,
			&v.Visit.EntryUTM.Source, &v.Visit.EntryUTM.Medium, &v.Visit.EntryUTM.Campaign, &v.Visit.PrevPage,
		}, [nTimes]*time.Time{
			&v.Time, &v.Visit.ViewTime, &v.Visit.VisitStart,
		}
}

// packedVerdict is a Verdict without pointers. A time keeps its wall clock
// and location (UTC, Local, or one of the queue's few others), not a
// monotonic reading: verdict times come from the stream, which has none.
type packedVerdict struct {
	off  int              // where the strings start in holdQueue.arena
	ends [nStrings]uint32 // end of each string, from off; each starts where the one before ends
	sec  [nTimes]int64    // Unix seconds
	nsec [nTimes]int32    // and nanoseconds
	loc  [nTimes]uint8    // 0 UTC, 1 Local, else holdQueue.locs[loc-2]
	s    verdictScalars   // everything else, as it is
}

// verdictScalars are a Verdict's fields that hold no pointers.
type verdictScalars struct {
	visitor, network, seq, batch uint64
	index, asn                   uint32
	partition                    uint16
	headers                      viewcount.HeaderFlags
	hints                        viewcount.Hints
	engagement                   viewcount.Engagement
	webdriver, datacenter        bool
	source                       viewcount.Source
	kind                         viewcount.Kind

	visitSet                                     bool
	visits, bounces                              int8
	visitMS, engagedMS                           int32
	engagedFrom, engagedTo, scrollFrom, scrollTo int8
}

func packScalars(v *viewcount.Verdict) verdictScalars {
	return verdictScalars{
		visitor: v.Visitor, network: v.Network, seq: v.Seq, batch: v.Batch,
		index: v.Index, asn: v.ASN, partition: v.Partition, headers: v.Headers,
		hints: v.Hints, engagement: v.Engagement,
		webdriver: v.Webdriver, datacenter: v.Datacenter, source: v.Source, kind: v.Kind,
		visitSet: v.Visit.Set, visits: v.Visit.Visits, bounces: v.Visit.Bounces,
		visitMS: v.Visit.VisitMS, engagedMS: v.Visit.EngagedMS,
		engagedFrom: v.Visit.EngagedFrom, engagedTo: v.Visit.EngagedTo,
		scrollFrom: v.Visit.ScrollFrom, scrollTo: v.Visit.ScrollTo,
	}
}

func (s *verdictScalars) unpack(v *viewcount.Verdict) {
	v.Visitor, v.Network, v.Seq, v.Batch = s.visitor, s.network, s.seq, s.batch
	v.Index, v.ASN, v.Partition, v.Headers = s.index, s.asn, s.partition, s.headers
	v.Hints, v.Engagement = s.hints, s.engagement
	v.Webdriver, v.Datacenter, v.Source, v.Kind = s.webdriver, s.datacenter, s.source, s.kind
	v.Visit.Set, v.Visit.Visits, v.Visit.Bounces = s.visitSet, s.visits, s.bounces
	v.Visit.VisitMS, v.Visit.EngagedMS = s.visitMS, s.engagedMS
	v.Visit.EngagedFrom, v.Visit.EngagedTo = s.engagedFrom, s.engagedTo
	v.Visit.ScrollFrom, v.Visit.ScrollTo = s.scrollFrom, s.scrollTo
}

// pack appends v to the held items, its strings to the arena.
func (q *holdQueue) pack(v *viewcount.Verdict) {
	strs, times := verdictFields(v)
	p := packedVerdict{off: len(q.arena), s: packScalars(v)}
	n := 0
	for i, s := range strs {
		q.arena = append(q.arena, *s...)
		n += len(*s)
		p.ends[i] = uint32(n) // ingest caps every string: a verdict's are KBs, not GBs
	}
	for i, t := range times {
		p.sec[i], p.nsec[i], p.loc[i] = t.Unix(), int32(t.Nanosecond()), q.locIndex(t.Location())
	}
	q.items = append(q.items, p)
}

// unpack sets v to the verdict p holds. Its strings share one allocation.
func (q *holdQueue) unpack(p *packedVerdict, v *viewcount.Verdict) {
	all := string(q.arena[p.off : p.off+int(p.ends[nStrings-1])])
	strs, times := verdictFields(v)
	from := uint32(0)
	for i, s := range strs {
		*s = all[from:p.ends[i]]
		from = p.ends[i]
	}
	for i, t := range times {
		*t = p.time(q.locs, i)
	}
	p.s.unpack(v)
}

// field is string i of p, in the arena.
func (q *holdQueue) field(p *packedVerdict, i int) []byte {
	from := uint32(0)
	if i > 0 {
		from = p.ends[i-1]
	}
	return q.arena[p.off+int(from) : p.off+int(p.ends[i])]
}

func (p *packedVerdict) time(locs []*time.Location, i int) time.Time {
	t := time.Unix(p.sec[i], int64(p.nsec[i]))
	switch l := p.loc[i]; l {
	case 0:
		return t.UTC()
	case 1:
		return t.Local()
	default:
		return t.In(locs[l-2])
	}
}

// unixMilli is the verdict's time in Unix ms, as Time.UnixMilli.
func (p *packedVerdict) unixMilli() int64 { return p.sec[0]*1e3 + int64(p.nsec[0])/1e6 }

// locIndex is packedVerdict.loc for l. Past 254 other zones a time is kept
// in UTC (the same instant): verdict times are all UTC but in tests.
func (q *holdQueue) locIndex(l *time.Location) uint8 {
	switch l {
	case time.UTC:
		return 0
	case time.Local:
		return 1
	}
	for i, o := range q.locs {
		if o == l {
			return uint8(i + 2)
		}
	}
	if len(q.locs) >= 254 {
		return 0
	}
	q.locs = append(q.locs, l)
	return uint8(len(q.locs) + 1)
}

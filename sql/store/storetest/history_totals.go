package storetest

import (
	"math/bits"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/viewcount/viewcount"
)

func (s *siteGen) totals(g *generator) *SiteTotals {
	t := &SiteTotals{
		Filtered: make(map[viewcount.Reason]int), PageDay: make(map[string][]int),
		Dims: make(map[string]map[string]int), DayUniques: make([]int, g.days),
	}
	for d := range g.days {
		t.Days = append(t.Days, g.day0.Add(time.Duration(d)*24*time.Hour))
		for _, w := range s.uniques[d] {
			t.DayUniques[d] += bits.OnesCount64(w)
		}
	}
	for i, days := range s.pageDay {
		for _, n := range days {
			if n > 0 {
				t.PageDay[g.pages[i]] = days
				t.Valid += n
			}
		}
	}
	add := func(dim, value string, n int) {
		if n == 0 {
			return
		}
		if t.Dims[dim] == nil {
			t.Dims[dim] = make(map[string]int)
		}
		t.Dims[dim][value] += n
	}
	for i, n := range s.refs {
		add("source", referrers[i].source, n)
		add("referrer", referrers[i].host, n)
	}
	for i, n := range s.utms {
		add("utm_source", campaigns[i].utm.Source, n)
		add("utm_medium", campaigns[i].utm.Medium, n)
		add("utm_campaign", campaigns[i].utm.Campaign, n)
	}
	for i, n := range s.clients {
		add("browser", clients[i].browser, n)
		add("os", clients[i].os, n)
		add("device", clients[i].device, n)
	}
	for i, n := range s.screens {
		add("screen", screenValues[i], n)
	}
	for i, n := range s.country {
		add("country", countries[i].code, n)
	}
	for i, n := range s.filtered {
		if n > 0 {
			t.Filtered[filterReasons[i].reason] += n
		}
	}
	return t
}

// mix is SplitMix64's finaliser: distinct inputs give well-spread ids.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// pick draws an index from a cumulative weight table.
func pick(rng *rand.Rand, cum []float64) int {
	x := rng.Float64() * cum[len(cum)-1]
	return min(sort.Search(len(cum), func(i int) bool { return cum[i] > x }), len(cum)-1)
}

func cumulative(ws ...float64) []float64 {
	out := make([]float64, len(ws))
	var s float64
	for i, w := range ws {
		s += w
		out[i] = s
	}
	return out
}

package storetest_test

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// TestHistoryTotals checks the totals History returns against direct
// counts over views_raw: tests of the stats API rely on them being exact.
func TestHistoryTotals(t *testing.T) {
	s := storetest.Open(t)
	if err := migrations.Apply(t.Context(), s, nil); err != nil {
		t.Fatal(err)
	}
	end := time.Date(2026, 3, 4, 15, 30, 0, 0, time.UTC)
	cfg := storetest.HistoryConfig{Events: 30_000, Days: 3, End: end, Sites: []string{"a.example", "b.example"},
		Pages: 40, Visitors: 700, Seed: 7, Batch: 7_000}
	tot, err := storetest.History(t.Context(), s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if tot.Events != 30_000 {
		t.Fatalf("events = %d, want 30000", tot.Events)
	}
	count := func(q string, p store.Params) map[string]int {
		t.Helper()
		res, err := s.Query(t.Context(), q, p)
		if err != nil {
			t.Fatal(err)
		}
		out := make(map[string]int)
		for _, r := range res.TextRows() {
			n, _ := strconv.Atoi(r[1])
			out[r[0]] = n
		}
		return out
	}
	// Test-only SQL: the exact counts the generator's totals must equal.
	if got := count("SELECT 'all', count() FROM views_raw WHERE time < {end:DateTime64(3)} AND time >= {start:DateTime64(3)}",
		store.Params{"end": end.Format(time.DateTime), "start": cfg.End.Add(-72 * time.Hour).Format(time.DateTime)}); got["all"] != 30_000 {
		t.Errorf("rows inside [start, end) = %d, want 30000", got["all"])
	}
	for site, st := range tot.Sites {
		p := store.Params{"site": site}
		filtered := count("SELECT verdict, count() FROM views_raw WHERE site = {site:String} AND verdict != 'valid' GROUP BY verdict", p)
		for r, n := range st.Filtered {
			if filtered[string(r)] != n {
				t.Errorf("%s: filtered %s = %d, want %d", site, r, filtered[string(r)], n)
			}
		}
		if len(filtered) != len(st.Filtered) {
			t.Errorf("%s: reasons %v, want %v", site, filtered, st.Filtered)
		}
		pageDay := count("SELECT concat(page, ' ', toString(toDate(time))), count() FROM views_raw WHERE site = {site:String} AND verdict = 'valid' GROUP BY 1", p)
		n := 0
		for page, days := range st.PageDay {
			for d, v := range days {
				key := page + " " + st.Days[d].Format(time.DateOnly)
				if v != pageDay[key] {
					t.Errorf("%s: %s = %d, want %d", site, key, pageDay[key], v)
				}
				if v > 0 {
					n++
				}
			}
		}
		if n != len(pageDay) {
			t.Errorf("%s: %d page-days in the store, %d in the totals", site, len(pageDay), n)
		}
		for _, dim := range []string{"ref_source", "ref_host", "utm_source", "utm_medium", "utm_campaign", "browser", "os", "device", "country", "screen"} {
			name := map[string]string{"ref_source": "source", "ref_host": "referrer"}[dim]
			if name == "" {
				name = dim
			}
			got := count("SELECT toString({d:Identifier}), count() FROM views_raw WHERE site = {site:String} AND verdict = 'valid' GROUP BY 1",
				store.Params{"site": site, "d": dim})
			want := st.Dims[name]
			if len(got) != len(want) || len(want) < 2 {
				t.Errorf("%s: %s values %v, want %v", site, name, got, want)
			}
			for v, n := range want {
				if got[v] != n {
					t.Errorf("%s: %s=%q: %d, want %d", site, name, v, got[v], n)
				}
			}
		}
		uniq := count("SELECT toString(toDate(time)), uniqExact(visitor) FROM views_raw WHERE site = {site:String} AND verdict = 'valid' GROUP BY 1", p)
		for d, n := range st.DayUniques {
			if key := st.Days[d].Format(time.DateOnly); uniq[key] != n {
				t.Errorf("%s: uniques on %s = %d, want %d", site, key, uniq[key], n)
			}
		}
	}
	if len(tot.Sites["a.example"].Days) != 4 { // 3×24 h ending mid-afternoon touch four UTC dates
		t.Errorf("days = %v", tot.Sites["a.example"].Days)
	}
	sum := tot.Valid
	for _, n := range tot.Filtered {
		sum += n
	}
	if sum != 30_000 || tot.Valid < 30_000*80/100 || tot.Valid > 30_000*90/100 {
		t.Errorf("valid %d + filtered %v != 30000, or filtered share far from 15 %%", tot.Valid, tot.Filtered)
	}
}

package judge

import (
	"fmt"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
)

// TestAllowJudge: an allow correction restores what the rule it names
// rejected, for the views it names in its range and site only, and judging
// goes on: the allowed view is still a duplicate, still excluded by an
// operator's exclusion.
func TestAllowJudge(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	const appUA = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 MyApp/2.1 (+https://myapp.example/about)"
	in := func(kind, value string) viewcount.Correction {
		return viewcount.Correction{ID: kind + value, Site: "example.com", Kind: kind, Value: value, From: t0, To: t0.Add(time.Hour)}
	}
	judge := func(cs []viewcount.Correction, e viewcount.Event) viewcount.Reason {
		t.Helper()
		r := newTestRules(t, Config{Corrections: cs})
		return r.Judge(&e)
	}
	view := func(ua string, at time.Duration) viewcount.Event {
		return viewcount.Event{Time: t0.Add(at), Site: "example.com", Page: "/a", UA: ua, Visitor: 1, Network: 1, Headers: browserRequest}
	}
	app := view(appUA, time.Minute)
	if got := judge(nil, app); got != viewcount.BotUA {
		t.Fatalf("the app's view without a correction: %s, want bot_ua (its URL)", got)
	}
	for _, c := range []struct {
		name string
		cs   []viewcount.Correction
		e    viewcount.Event
		want viewcount.Reason
	}{
		{"ua", []viewcount.Correction{in(viewcount.KindAllow, "ua=myapp/")}, app, viewcount.Valid},
		{"ua and reason", []viewcount.Correction{in(viewcount.KindAllow, "ua=MyApp&reason=bot_ua")}, app, viewcount.Valid},
		{"another reason", []viewcount.Correction{in(viewcount.KindAllow, "ua=MyApp&reason=datacenter")}, app, viewcount.BotUA},
		{"another ua", []viewcount.Correction{in(viewcount.KindAllow, "ua=OtherApp")}, app, viewcount.BotUA},
		{"another site", []viewcount.Correction{{ID: "x", Site: "other.org", Kind: viewcount.KindAllow, Value: "ua=MyApp", From: t0, To: t0.Add(time.Hour)}}, app, viewcount.BotUA},
		{"before the range", []viewcount.Correction{in(viewcount.KindAllow, "ua=MyApp")}, view(appUA, -time.Millisecond), viewcount.BotUA},
		{"at its end", []viewcount.Correction{in(viewcount.KindAllow, "ua=MyApp")}, view(appUA, time.Hour), viewcount.BotUA},
		{"asn elsewhere", []viewcount.Correction{in(viewcount.KindAllow, "ua=MyApp&asn=64500")}, app, viewcount.BotUA},
		// An exclusion wins, whatever the order they were added in.
		{"excluded", []viewcount.Correction{in(viewcount.KindPath, "/a"), in(viewcount.KindAllow, "ua=MyApp")}, app, viewcount.Excluded},
		{"excluded, allow first", []viewcount.Correction{in(viewcount.KindAllow, "ua=MyApp"), in(viewcount.KindPath, "/a")}, app, viewcount.Excluded},
		// The next rule still judges: a script's request is header_mismatch
		// when the allow names bot_ua only.
		{"the next rule", []viewcount.Correction{in(viewcount.KindAllow, "ua=MyApp&reason=bot_ua")},
			viewcount.Event{Time: t0.Add(time.Minute), Site: "example.com", Page: "/a", UA: "MyApp/2.1 (+https://myapp.example)", Visitor: 1, Network: 1, Headers: scriptRequest},
			viewcount.HeaderMismatch},
	} {
		if got := judge(c.cs, c.e); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}

	// Datacenter by AS number (16509, AWS, is on the hosting list), and a
	// family: the dashboard's browser name.
	cloud := viewcount.Event{Time: t0.Add(time.Minute), Site: "example.com", Page: "/a", UA: uaFirefoxWin, Visitor: 2, Network: 2, ASN: 16509, Headers: browserRequest}
	if got := judge(nil, cloud); got != viewcount.Datacenter {
		t.Fatalf("a view from AWS: %s, want datacenter", got)
	}
	if got := judge([]viewcount.Correction{in(viewcount.KindAllow, "asn=16509&reason=datacenter")}, cloud); got != viewcount.Valid {
		t.Errorf("allowed AS: %s, want valid", got)
	}
	if got := judge([]viewcount.Correction{in(viewcount.KindAllow, "family=firefox")}, cloud); got != viewcount.Valid {
		t.Errorf("allowed family: %s, want valid", got)
	}
	if got := judge([]viewcount.Correction{in(viewcount.KindAllow, "family=Chrome")}, cloud); got != viewcount.Datacenter {
		t.Errorf("another family: %s, want datacenter", got)
	}

	// Still a duplicate: an allow never counts a view twice.
	r := newTestRules(t, Config{Corrections: []viewcount.Correction{in(viewcount.KindAllow, "ua=MyApp")}})
	first, again := app, app
	again.Time = again.Time.Add(time.Minute)
	if a, b := r.Judge(&first), r.Judge(&again); a != viewcount.Valid || b != viewcount.Duplicate {
		t.Errorf("allowed view and its reload: %s, %s; want valid, duplicate", a, b)
	}
}

// TestAllowRate: an allow of rate restores a flood's views whether Judge
// rejects them at once or Settle does after holding them, and only the
// views it names: a school's lab behind one address, allowed by AS.
func TestAllowRate(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, allow := range []bool{false, true} {
		cfg := Config{}
		if allow {
			cfg.Corrections = []viewcount.Correction{{ID: "lab", Site: "example.com", Kind: viewcount.KindAllow, Value: "asn=64500&reason=rate", From: t0, To: t0.Add(time.Hour)}}
		}
		r, err := NewRules(cfg, sitesOf{"example.com": true})
		if err != nil {
			t.Fatal(err)
		}
		counted := map[viewcount.Reason]int{}
		var held []viewcount.Verdict
		for i := range 100 { // 100 pages in 20 s, one visitor
			e := settleEvent(t0, i*200, 42, 7, fmt.Sprintf("/p%d", i))
			e.ASN = 64500
			v := viewcount.Verdict{Event: e, Reason: r.Judge(&e)}
			if v.Reason == viewcount.Valid && r.Watched(&e) {
				held = append(held, v)
				continue
			}
			counted[v.Reason]++
		}
		for i := range held { // as the consumer does once the window has passed
			r.Settle(&held[i])
			counted[held[i].Reason]++
		}
		want := map[viewcount.Reason]int{viewcount.Valid: 100}
		if !allow {
			want = map[viewcount.Reason]int{viewcount.Valid: 4, viewcount.Rate: 96}
		}
		if fmt.Sprint(counted) != fmt.Sprint(want) {
			t.Errorf("allow=%v: %v, want %v", allow, counted, want)
		}
	}
}

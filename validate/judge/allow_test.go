package judge

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
)

func TestAllowValue(t *testing.T) {
	for in, want := range map[string]string{
		"ua=Instagram":                         "ua=Instagram",
		"reason=BOT_UA&ua=Instagram+354":       "reason=bot_ua&ua=Instagram%20354",
		"asn=AS16509&reason=datacenter":        "asn=16509&reason=datacenter",
		"family=Yandex+Browser":                "family=Yandex%20Browser",
		"ua=AllowApp%2F":                       "ua=AllowApp/",
		"ua=a%2Bb%26c%3Dd%25":                  "ua=a%2Bb%26c%3Dd%25",
		"ua=%28iPhone%3B+CPU&reason=rate":      "reason=rate&ua=(iPhone%3B%20CPU",
		"reason=header_mismatch&family=Safari": "family=Safari&reason=header_mismatch",
	} {
		a, err := ParseAllowValue(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if a.String() != want {
			t.Errorf("%q read as %q, want %q", in, a.String(), want)
		}
		if b, err := ParseAllowValue(a.String()); err != nil || b != a {
			t.Errorf("%q does not read back: %+v %v", a.String(), b, err)
		}
	}
	for in, want := range map[string]string{
		"":                               "name what to allow",
		"ip=1.2.3.4":                     `unknown term "ip"`,
		"reason=duplicate":               `"duplicate" cannot be allowed`,
		"reason=excluded":                `"excluded" cannot be allowed`,
		"reason=unknown_site":            `"unknown_site" cannot be allowed`,
		"reason=duplicate_id":            `"duplicate_id" cannot be allowed`,
		"ua=a&ua=b":                      "ua: give it once",
		"ua=":                            "ua: give it once, not empty",
		"asn=cloud":                      "asn: an AS number",
		"ua=" + strings.Repeat("x", 501): "ua: at most 500 bytes",
		"ua=%zz":                         "want ua=, family=",
	} {
		if _, err := ParseAllowValue(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one containing %q", in, err, want)
		}
	}
}

// TestAllowJudge: an allow correction restores what the rule it names
// rejected, for the views it names in its range and site only, and judging
// goes on: the allowed view is still a duplicate, still excluded by an
// operator's exclusion.
func TestAllowJudge(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	const appUA = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 MyApp/2.1 (+https://myapp.example/about)"
	in := func(kind, value string) Correction {
		return Correction{ID: kind + value, Site: "example.com", Kind: kind, Value: value, From: t0, To: t0.Add(time.Hour)}
	}
	judge := func(cs []Correction, e viewcount.Event) viewcount.Reason {
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
		cs   []Correction
		e    viewcount.Event
		want viewcount.Reason
	}{
		{"ua", []Correction{in(KindAllow, "ua=myapp/")}, app, viewcount.Valid},
		{"ua and reason", []Correction{in(KindAllow, "ua=MyApp&reason=bot_ua")}, app, viewcount.Valid},
		{"another reason", []Correction{in(KindAllow, "ua=MyApp&reason=datacenter")}, app, viewcount.BotUA},
		{"another ua", []Correction{in(KindAllow, "ua=OtherApp")}, app, viewcount.BotUA},
		{"another site", []Correction{{ID: "x", Site: "other.org", Kind: KindAllow, Value: "ua=MyApp", From: t0, To: t0.Add(time.Hour)}}, app, viewcount.BotUA},
		{"before the range", []Correction{in(KindAllow, "ua=MyApp")}, view(appUA, -time.Millisecond), viewcount.BotUA},
		{"at its end", []Correction{in(KindAllow, "ua=MyApp")}, view(appUA, time.Hour), viewcount.BotUA},
		{"asn elsewhere", []Correction{in(KindAllow, "ua=MyApp&asn=64500")}, app, viewcount.BotUA},
		// An exclusion wins, whatever the order they were added in.
		{"excluded", []Correction{in(KindPath, "/a"), in(KindAllow, "ua=MyApp")}, app, viewcount.Excluded},
		{"excluded, allow first", []Correction{in(KindAllow, "ua=MyApp"), in(KindPath, "/a")}, app, viewcount.Excluded},
		// The next rule still judges: a script's request is header_mismatch
		// when the allow names bot_ua only.
		{"the next rule", []Correction{in(KindAllow, "ua=MyApp&reason=bot_ua")},
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
	if got := judge([]Correction{in(KindAllow, "asn=16509&reason=datacenter")}, cloud); got != viewcount.Valid {
		t.Errorf("allowed AS: %s, want valid", got)
	}
	if got := judge([]Correction{in(KindAllow, "family=firefox")}, cloud); got != viewcount.Valid {
		t.Errorf("allowed family: %s, want valid", got)
	}
	if got := judge([]Correction{in(KindAllow, "family=Chrome")}, cloud); got != viewcount.Datacenter {
		t.Errorf("another family: %s, want datacenter", got)
	}

	// Still a duplicate: an allow never counts a view twice.
	r := newTestRules(t, Config{Corrections: []Correction{in(KindAllow, "ua=MyApp")}})
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
			cfg.Corrections = []Correction{{ID: "lab", Site: "example.com", Kind: KindAllow, Value: "asn=64500&reason=rate", From: t0, To: t0.Add(time.Hour)}}
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

// FuzzAllowValue: whatever an operator types, Check either refuses it or
// stores a canonical value that reads back to the same terms.
func FuzzAllowValue(f *testing.F) {
	for _, s := range []string{"ua=Instagram", "reason=bot_ua&family=Safari", "asn=AS1", "ua=%00", "a=b&c", "ua=x&ua=y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		c := Correction{Site: "example.com", Kind: KindAllow, Value: v, From: time.Unix(0, 0), To: time.Unix(1, 0)}
		if err := c.Check(); err != nil {
			return
		}
		a, err := ParseAllowValue(c.Value)
		if err != nil || a.String() != c.Value {
			t.Fatalf("%q stored as %q, which reads as %+v (%v)", v, c.Value, a, err)
		}
		again := c
		if err := again.Check(); err != nil || again.Value != c.Value {
			t.Fatalf("checking %q again: %q %v", c.Value, again.Value, err)
		}
	})
}

package judge

import (
	"testing"
	"time"

	"github.com/viewcount/viewcount"
)

func TestCorrectionMatch(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	cs, _, err := newCorrections([]viewcount.Correction{
		{ID: "a", Site: "s.example", Kind: viewcount.KindASN, Value: "AS16509", From: t0, To: t0.Add(time.Hour)},
		{ID: "n", Site: "s.example", Kind: viewcount.KindNetwork, Value: "42", From: t0, To: t0.Add(time.Hour)},
		{ID: "r", Site: "s.example", Kind: viewcount.KindReferrer, Value: "https://www.Ring.example/x", From: t0, To: t0.Add(time.Hour)},
		{ID: "p", Site: "s.example", Kind: viewcount.KindPath, Value: "/promo/*", From: t0, To: t0.Add(time.Hour)},
		{ID: "q", Site: "s.example", Kind: viewcount.KindPath, Value: "/exact", From: t0, To: t0.Add(time.Hour)},
	})
	if err != nil {
		t.Fatal(err)
	}
	in := t0.Add(time.Minute).UnixMilli()
	for _, c := range []struct {
		name string
		e    viewcount.Event
		t    int64
		want bool
	}{
		{"asn", viewcount.Event{Site: "s.example", Page: "/", ASN: 16509}, in, true},
		{"other asn", viewcount.Event{Site: "s.example", Page: "/", ASN: 16510}, in, false},
		{"network", viewcount.Event{Site: "s.example", Page: "/", Network: 42}, in, true},
		{"referrer subdomain", viewcount.Event{Site: "s.example", Page: "/", Referrer: "https://a.ring.example/p"}, in, true},
		{"referrer www", viewcount.Event{Site: "s.example", Page: "/", Referrer: "http://www.ring.example/"}, in, true},
		{"referrer suffix only", viewcount.Event{Site: "s.example", Page: "/", Referrer: "https://notring.example/"}, in, false},
		{"path prefix", viewcount.Event{Site: "s.example", Page: "/promo/x"}, in, true},
		{"path exact", viewcount.Event{Site: "s.example", Page: "/exact"}, in, true},
		{"path exact not prefix", viewcount.Event{Site: "s.example", Page: "/exact/more"}, in, false},
		{"other site", viewcount.Event{Site: "t.example", Page: "/promo/x"}, in, false},
		{"before", viewcount.Event{Site: "s.example", Page: "/promo/x"}, t0.UnixMilli() - 1, false},
		{"from included", viewcount.Event{Site: "s.example", Page: "/promo/x"}, t0.UnixMilli(), true},
		{"to excluded", viewcount.Event{Site: "s.example", Page: "/promo/x"}, t0.Add(time.Hour).UnixMilli(), false},
	} {
		if got := cs.match(&c.e, c.t) != ""; got != c.want {
			t.Errorf("%s: match = %v, want %v", c.name, got, c.want)
		}
	}
	for _, bad := range []viewcount.Correction{
		{Site: "s.example", Kind: "ip", Value: "1.2.3.4", From: t0, To: t0.Add(time.Hour)},
		{Site: "s.example", Kind: viewcount.KindASN, Value: "cloud", From: t0, To: t0.Add(time.Hour)},
		{Site: "s.example", Kind: viewcount.KindPath, Value: "promo", From: t0, To: t0.Add(time.Hour)},
		{Site: "s.example", Kind: viewcount.KindPath, Value: "/p", From: t0, To: t0},
		{Kind: viewcount.KindPath, Value: "/p", From: t0, To: t0.Add(time.Hour)},
	} {
		if err := bad.Check(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

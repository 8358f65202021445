package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/cmd/viewcount/app"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/test/apptest"
)

// TestIPv6Floods replays an attacker's probe through the whole server
// (HTTP, embedded NATS and chDB): (1) one /64, what any IPv6 home line or
// phone gets, sent 550 views of one page as fast as it could, each from
// another address of it: 550 counted, since the visitor id hashed the
// whole address; (2) 3,000 /48s of one /32, one view each of one page: all
// counted, since every network limit was per /48. Now the /64 is one
// visitor (one view counted; the rest duplicate or rate), and a /32's
// views of one page meet --block-rate: the flood counts only the views
// before it was watched, a sixth of the limit.
//
// The flood is an attacker's burst: it is received within one rate window
// however slowly this box sends it (the server's clock stands still while
// it does, then steps past the settle window to release the held views).
// On the wall clock a loaded box stretched it over two windows, each
// counting its first sixth.
func TestIPv6Floods(t *testing.T) {
	start := time.Now()
	var stepped atomic.Int64
	now := func() time.Time { return start.Add(time.Duration(stepped.Load())) }
	m := apptest.StartWith(t, t.TempDir(), apptest.NewDB(), func(c *app.Config) { c.Validate.Rules.SettleWindow = 2 * time.Second }, now)
	c := apptest.NewClient(t, m)
	const site = "v6.example"
	c.AddSite(site)
	const firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:145.0) Gecko/20100101 Firefox/145.0"
	rnd := rand.New(rand.NewPCG(64, 48))
	const homeViews, blockViews = 550, 3000
	for range homeViews {
		ip := fmt.Sprintf("2001:db8:aa:bb:%x:%x:%x:%x", rnd.IntN(1<<16), rnd.IntN(1<<16), rnd.IntN(1<<16), rnd.IntN(1<<16))
		if code := c.Send(apptest.Hit{IP: ip, UA: firefox, Site: site, Page: "/home-line"}); code != 200 {
			t.Fatalf("hit: %d", code)
		}
	}
	for i := range blockViews {
		ip := fmt.Sprintf("2001:db9:%x::%x", i, rnd.IntN(1<<16)+1)
		if code := c.Send(apptest.Hit{IP: ip, UA: firefox, Site: site, Page: "/inflate"}); code != 200 {
			t.Fatalf("hit: %d", code)
		}
	}
	stepped.Store(int64(3 * time.Second))
	apptest.Eventually(t, 60*time.Second, func() string {
		var n uint64
		for _, v := range apptest.Reasons(t, m, site) {
			n += v
		}
		if n < homeViews+blockViews {
			return strconv.FormatUint(n, 10) + " events stored (held views wait for the settle window)"
		}
		if m.Metrics.Fed.Load() < n {
			return "not all fed"
		}
		return ""
	})
	counted := func(page string) uint64 {
		res, err := m.Store.Query(context.Background(), queries.Text(queries.PageCount), store.Params{"site": site, "page": page})
		if err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.ParseUint(res.TextRows()[0][0], 10, 64)
		return n
	}
	home, block := counted("/home-line"), counted("/inflate")
	t.Logf("counted: %d of %d views from one /64, %d of %d from %d /48s of one /32; verdicts %v",
		home, homeViews, block, blockViews, blockViews, apptest.Reasons(t, m, site))
	if home != 1 {
		t.Errorf("one /64: %d views counted, want 1", home)
	}
	if limit := uint64(1200); block > limit/6 {
		t.Errorf("one /32: %d views counted, want at most %d", block, limit/6)
	}
	if r := apptest.Reasons(t, m, site); r[string(viewcount.Rate)] < blockViews-200 {
		t.Errorf("verdicts %v: want the /32's flood rate", r)
	}
}

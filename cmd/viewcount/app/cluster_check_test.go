//go:build !race

package app

import (
	"context"
	_ "embed"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
)

// What TestNATSClusterKills checks once the load is counted.

var (
	//go:embed testdata/cluster_raw.sql
	clusterRawSQL string
	//go:embed testdata/cluster_valid_ids.sql
	clusterValidIDsSQL string
)

// siteViews reads the api's public count of the whole site.
func siteViews(t *testing.T, c *Client, site string) CountBody {
	t.Helper()
	req, _ := http.NewRequest("GET", c.Base+"/v1/sites/"+site+"/count", nil)
	code, body := c.Do(req)
	var out CountBody
	if err := json.Unmarshal(body, &out); code != http.StatusOK || err != nil {
		t.Fatalf("site count: %d %s", code, body)
	}
	return out
}

// pageCountsDiffer compares the api's public counts of every page with
// the hits acknowledged for it; "" when all are equal.
func pageCountsDiffer(t *testing.T, c *Client, site string, pages int, want map[string]int) string {
	t.Helper()
	q := url.Values{}
	for i := range pages {
		q.Add("page", "/p/"+strconv.Itoa(i))
	}
	req, _ := http.NewRequest("GET", c.Base+"/v1/sites/"+site+"/counts?"+q.Encode(), nil)
	code, body := c.Do(req)
	if code != http.StatusOK {
		return "counts: " + strconv.Itoa(code) + " " + string(body)
	}
	var out struct {
		Counts []struct {
			Page  string `json:"page"`
			Views int    `json:"views"`
		} `json:"counts"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("counts %s: %v", body, err)
	}
	var diff []string
	for _, pc := range out.Counts {
		if pc.Views != want[pc.Page] {
			diff = append(diff, pc.Page+": "+strconv.Itoa(pc.Views)+", want "+strconv.Itoa(want[pc.Page]))
		}
	}
	return strings.Join(diff, "; ")
}

// checkRaw checks views_raw: no stream event stored twice, one valid row
// for each acknowledged id and none for another, and nothing rejected but
// retries of hits already stored (duplicate_id).
func checkRaw(t *testing.T, st store.Store, site string, acked map[string]string) {
	t.Helper()
	ctx := context.Background()
	res, err := st.Query(ctx, clusterRawSQL, store.Params{"site": site})
	if err != nil {
		t.Fatal(err)
	}
	r := res.TextRows()[0]
	if r[0] != r[1] {
		t.Errorf("views_raw: %s rows for %s stream events: some inserted twice", r[0], r[1])
	}
	n := strconv.Itoa(len(acked))
	if r[2] != n || r[3] != n {
		t.Errorf("views_raw: %s valid rows of %s event ids, want %s of %s", r[2], r[3], n, n)
	}
	res, err = st.Query(ctx, clusterValidIDsSQL, store.Params{"site": site})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.TextRows() {
		if _, ok := acked[r[0]]; !ok {
			t.Errorf("valid event id %s was never acknowledged", r[0])
		}
	}
	res, err = st.Query(ctx, queries.Text("reasons"), store.Params{"site": site})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.TextRows() {
		if r[0] != string(viewcount.Valid) && r[0] != string(viewcount.DuplicateID) {
			t.Errorf("%s events judged %s", r[1], r[0])
		}
	}
	t.Logf("views_raw: %s rows, by verdict %v", r[0], res.TextRows())
}

// checkStreamReplicas checks that VIEWS keeps 3 replicas, all current.
func checkStreamReplicas(t *testing.T, url string) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, func() string {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		s, err := js.Stream(ctx, viewcount.StreamName)
		if err != nil {
			return err.Error()
		}
		info := s.CachedInfo()
		if info.Config.Replicas != 3 || info.Cluster == nil || len(info.Cluster.Replicas) != 2 {
			return "stream replicas " + strconv.Itoa(info.Config.Replicas)
		}
		for _, r := range info.Cluster.Replicas {
			if !r.Current || r.Offline {
				return "replica " + r.Name + " not current"
			}
		}
		return ""
	})
}

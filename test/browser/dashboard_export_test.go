//go:build !race

package browser

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// checkExport: "Export all" saves every card's CSV for the view in one ZIP
// file (issue 23). Go's archive/zip reads it, CRCs checked; it holds the
// summary, the chart's figure and every breakdown, each file the stats
// API's CSV for the view's range. Returns the last load.
func checkExport(t *testing.T, b *browser, api statsAPI, dd dashDays, load string) string {
	dl := b.allowDownloads(t)
	load = pickCustom(t, b, dd.date(0), dd.date(2), load)
	b.do(t, "export all", chromedp.Click(chromedp.ID("zip")))
	path := filepath.Join(dl, "dash.example-"+dd.date(0)+"-"+dd.date(2)+".zip")
	data := waitDownload(t, path)
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("open the export: %v", err)
	}
	q := days(dd.date(0), dd.date(2))
	want := map[string]url.Values{"summary.csv": q, "timeseries.csv": cloneWith(q, "interval", "hour")}
	for _, by := range []string{"page", "entry_page", "exit_page", "source", "channel", "referrer", "utm_source", "utm_medium", "utm_campaign", "browser", "os", "device", "country", "screen"} {
		want[by+".csv"] = cloneWith(q, "by", by, "limit", "1000")
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		wq, ok := want[f.Name]
		if !ok {
			t.Errorf("export: unexpected file %s", f.Name)
			continue
		}
		r, err := f.Open()
		if err != nil {
			t.Fatalf("export: %s: %v", f.Name, err)
		}
		got, err := csv.NewReader(r).ReadAll()
		_ = r.Close() // a CRC mismatch shows as a read error above
		if err != nil {
			t.Fatalf("export: %s: %v", f.Name, err)
		}
		what := "breakdown"
		if wq.Get("by") == "" {
			what = f.Name[:len(f.Name)-len(".csv")]
		}
		if fromAPI := api.csv(t, what, wq); !equalRows(got, fromAPI) {
			t.Errorf("export: %s = %v, want the API's %v", f.Name, got, fromAPI)
		}
	}
	if len(names) != len(want) {
		t.Errorf("export holds %v, want %d files", names, len(want))
	}
	t.Logf("export: %d files, %d bytes", len(names), len(data))
	return load
}

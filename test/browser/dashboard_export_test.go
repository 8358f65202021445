//go:build !race

package browser

import (
	"archive/zip"
	"encoding/csv"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/viewcount/viewcount/test/apptest"
)

// checkExport: "Export all" saves every card's CSV for the view in one ZIP
// file (issue 23). Go's archive/zip reads it, CRCs checked; it holds the
// summary, the chart's figure and every breakdown, each file the stats
// API's CSV for the view's range. Returns the last load.
func checkExport(t *testing.T, b *browser, api statsAPI, dd dashDays, load string) string {
	dl := t.TempDir()
	if _, err := chromedp.Call(b.ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
		Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dl,
	}); err != nil {
		t.Fatalf("allow downloads: %v", err)
	}
	load = pickCustom(t, b, dd.date(0), dd.date(2), load)
	b.do(t, "export all", chromedp.Click(chromedp.ID("zip")))
	path := filepath.Join(dl, "dash.example-"+dd.date(0)+"-"+dd.date(2)+".zip")
	var zr *zip.ReadCloser
	apptest.Eventually(t, 30*time.Second, func() string {
		var err error
		if zr, err = zip.OpenReader(path); err != nil {
			return "open the export: " + err.Error()
		}
		return ""
	})
	t.Cleanup(func() { _ = zr.Close() })
	q := days(dd.date(0), dd.date(2))
	want := map[string]url.Values{"summary.csv": q, "timeseries.csv": cloneWith(q, "interval", "hour")}
	for _, by := range []string{"page", "entry_page", "exit_page", "source", "referrer", "utm_source", "utm_medium", "utm_campaign", "browser", "os", "device", "country", "screen"} {
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
	if fi, err := os.Stat(path); err == nil {
		t.Logf("export: %d files, %d bytes", len(names), fi.Size())
	}
	return load
}

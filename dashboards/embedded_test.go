package dashboards

import (
	"fmt"
	"os"
	"testing"

	"github.com/goccy/go-yaml"
)

// The embedded mode's provisioning names the same data source uids as the
// server mode's, so every dashboard works on both, and reaches the SQL
// listener over HTTP with an analyst token.
func TestEmbeddedProvisioning(t *testing.T) {
	b, err := os.ReadFile("provisioning-embedded/datasources/clickhouse.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Datasources []struct {
			UID      string            `yaml:"uid"`
			Type     string            `yaml:"type"`
			JSONData map[string]any    `yaml:"jsonData"`
			Secure   map[string]string `yaml:"secureJsonData"`
		} `yaml:"datasources"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Datasources) != 1 {
		t.Fatalf("data sources: %+v", doc.Datasources)
	}
	ds := doc.Datasources[0]
	if ds.UID != "viewcount-clickhouse" || ds.Type != typeClickHouse || ds.JSONData["protocol"] != "http" || fmt.Sprint(ds.JSONData["port"]) != "8123" ||
		ds.JSONData["defaultDatabase"] != "viewcount" || ds.Secure["password"] != "${VIEWCOUNT_ANALYST_TOKEN}" {
		t.Errorf("embedded ClickHouse data source: %+v", ds)
	}
	if got := provisioned(t)[ds.UID]; got != ds.Type {
		t.Errorf("uid %s: server-mode provisioning has type %q, embedded %q", ds.UID, got, ds.Type)
	}
}

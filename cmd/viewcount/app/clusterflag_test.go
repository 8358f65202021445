package app

import (
	"strings"
	"testing"
)

func TestClusterFlag(t *testing.T) {
	if _, err := ParseConfig("serve", []string{"--cluster", "vc"}); err == nil || !strings.Contains(err.Error(), "--cluster vc needs CLICKHOUSE_DSN") {
		t.Errorf("--cluster on the embedded store: %v", err)
	}
	c, err := ParseConfig("validate", []string{"--cluster", "vc", "--clickhouse-dsn", "clickhouse://ch:9000/viewcount"})
	if err != nil || c.Store.Cluster != "vc" {
		t.Errorf("--cluster vc: %q, %v", c.Store.Cluster, err)
	}
	t.Setenv("VIEWCOUNT_CLUSTER", "from_env")
	t.Setenv("CLICKHOUSE_DSN", "clickhouse://ch:9000/viewcount")
	if c, err := ParseConfig("api", nil); err != nil || c.Store.Cluster != "from_env" {
		t.Errorf("VIEWCOUNT_CLUSTER: %q, %v", c.Store.Cluster, err)
	}
	if c, err := ParseConfig("serve", nil); err != nil || c.Store.Cluster != "from_env" {
		t.Errorf("serve with VIEWCOUNT_CLUSTER and CLICKHOUSE_DSN: %q, %v", c.Store.Cluster, err)
	}
}

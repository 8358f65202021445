package rollup_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/viewcount/viewcount/rollup"
	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// chDB knows no cluster, so MigrateCluster must stop before it creates
// anything, saying why; the schema itself is tested in package sql/examples
// (TestClusterParses, TestClusterSchema).
func TestMigrateClusterRefuses(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t)
	err := rollup.MigrateCluster(ctx, s, "nowhere", discard())
	if !errors.Is(err, rollup.ErrClusterSetup) || !strings.Contains(err.Error(), "--cluster nowhere: the server has no such cluster") {
		t.Errorf("unknown cluster: %v", err)
	}
	if err := rollup.MigrateCluster(ctx, s, "a' ON CLUSTER 'b", discard()); !errors.Is(err, migrations.ErrClusterName) {
		t.Errorf("cluster name with a quote: %v", err)
	}
	res, err := s.Query(ctx, "SELECT count() FROM system.tables WHERE database = currentDatabase()", nil)
	if err != nil || len(res.TextRows()) != 1 || res.TextRows()[0][0] != "0" {
		t.Errorf("tables created by a refused MigrateCluster: %v %v", res, err)
	}
}

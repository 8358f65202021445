package migrations_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// chDB knows no cluster, so ApplyCluster must stop before it creates
// anything, saying why; the schema itself is tested in package sql/examples
// (TestClusterParses, TestClusterSchema).
func TestMigrateClusterRefuses(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t)
	err := migrations.ApplyCluster(ctx, s, "nowhere", discard())
	if !errors.Is(err, migrations.ErrClusterSetup) || !strings.Contains(err.Error(), "--cluster nowhere: the server has no such cluster") {
		t.Errorf("unknown cluster: %v", err)
	}
	if err := migrations.ApplyCluster(ctx, s, "a' ON CLUSTER 'b", discard()); !errors.Is(err, migrations.ErrClusterName) {
		t.Errorf("cluster name with a quote: %v", err)
	}
	res, err := s.Query(ctx, "SELECT count() FROM system.tables WHERE database = currentDatabase()", nil)
	if err != nil || len(res.TextRows()) != 1 || res.TextRows()[0][0] != "0" {
		t.Errorf("tables created by a refused ApplyCluster: %v %v", res, err)
	}
}

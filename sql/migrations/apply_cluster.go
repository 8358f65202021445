package migrations

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
)

// ErrClusterSetup is returned (wrapped) by ApplyCluster when the server
// it reaches cannot hold the cluster schema safely: it does not know the
// cluster, or its inserts into Distributed tables are not in the
// foreground.
var ErrClusterSetup = errors.New("cluster setup")

// ApplyCluster is Apply for a ClickHouse cluster (`--cluster NAME`):
// it applies the files of cluster/ (the schema the migrations leave,
// as Replicated local tables under Distributed ones; see
// cluster/README.md) with NAME in their ON CLUSTER clauses, each once,
// recorded in cluster_migrations, a table every host holds whole.
//
// First it checks that the server knows the cluster, runs inserts into
// Distributed tables in the foreground (distributed_foreground_insert =
// 1: otherwise an insert is acknowledged before its shards have it, and a
// retried batch could be counted twice) and, with several replicas a
// shard, acknowledges an insert once every replica has it (insert_quorum:
// the feed reads a batch back right after it is stored, from any
// replica). ErrClusterSetup says which is missing.
// The database is created on every host.
//
// Like Apply, running it again or from several processes at once is
// harmless: every statement is IF NOT EXISTS, and ON CLUSTER statements
// wait (distributed_ddl_task_timeout) until every host ran them.
func ApplyCluster(ctx context.Context, s Execer, cluster string, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("component", "migrate", "cluster", cluster)
	ms, err := Cluster(cluster)
	if err != nil {
		return fmt.Errorf("migrate cluster: %w", err)
	}
	db, err := checkCluster(ctx, s, cluster)
	if err != nil {
		return err
	}
	if err := execOnCluster(ctx, s, queries.ClusterDatabase, cluster, store.Params{"db": db}); err != nil {
		return fmt.Errorf("migrate cluster: create database %s on every host: %w", db, err)
	}
	if err := execOnCluster(ctx, s, queries.ClusterMigrationsInit, cluster, nil); err != nil {
		return fmt.Errorf("migrate cluster: create cluster_migrations: %w", err)
	}
	return apply(ctx, s, ms, migrationLog{"migrate cluster", "cluster_migrations", queries.ClusterMigrationsApplied, queries.ClusterMigrationsRecord}, logger)
}

// checkCluster fails with ErrClusterSetup unless the server lists the
// cluster's hosts, inserts into Distributed tables in the foreground and,
// when shards have several replicas, waits for every replica of the shard
// (insert_quorum); it returns the connection's database.
func checkCluster(ctx context.Context, s Execer, cluster string) (string, error) {
	res, err := s.Query(ctx, queries.Text(queries.ClusterCheck), store.Params{"cluster": cluster})
	if err != nil {
		return "", fmt.Errorf("migrate cluster: check %s: %w", cluster, err)
	}
	if res.Len() != 1 {
		return "", fmt.Errorf("migrate cluster: check %s: got %d rows", cluster, res.Len())
	}
	res.Next()
	if res.Text("hosts") == "0" {
		return "", fmt.Errorf("%w: --cluster %s: the server has no such cluster in its remote_servers (system.clusters)", ErrClusterSetup, cluster)
	}
	if res.Uint64("foreground") != 1 && res.Err() == nil {
		return "", fmt.Errorf("%w: --cluster %s: set distributed_foreground_insert = 1 in the ClickHouse user's profile: "+
			"inserts into Distributed tables must wait for every shard, or a retried batch can be counted twice", ErrClusterSetup, cluster)
	}
	replicas, quorumText, db := res.Int("replicas"), res.String("quorum"), res.String("db")
	if err := res.Err(); err != nil {
		return "", fmt.Errorf("migrate cluster: check %s: %w", cluster, err)
	}
	// insert_quorum is a setting's text; one that is no number ('auto')
	// counts as too low.
	if quorum, _ := strconv.Atoi(quorumText); replicas > 1 && quorum < replicas {
		return "", fmt.Errorf("%w: --cluster %s: shards have %d replicas: set insert_quorum = %d in the ClickHouse user's profile (it is %s): "+
			"a batch must be on every replica before the feed reads it back, or a lagging replica leaves it out of the rollups",
			ErrClusterSetup, cluster, replicas, replicas, quorumText)
	}
	return db, nil
}

func execOnCluster(ctx context.Context, s Execer, query, cluster string, params store.Params) error {
	st, err := OnCluster(queries.Text(query), cluster)
	if err != nil {
		return err
	}
	return s.Exec(ctx, st, params)
}

// ApplyRawRetentionCluster is ApplyRawRetention on a cluster: the TTL
// goes on each host's views_raw_local, page_views_local and
// rejected_rollup_local (the Distributed tables store nothing), where it
// differs.
func ApplyRawRetentionCluster(ctx context.Context, q Execer, cluster string, days int, logger *slog.Logger) error {
	if days < 1 {
		return fmt.Errorf("raw retention: %d days, want at least 1", days)
	}
	for _, table := range retained {
		local := table + "_local"
		cur, err := retentionDays(ctx, q, local)
		if err != nil {
			return err
		}
		if cur == days {
			continue
		}
		if err := execOnCluster(ctx, q, queries.RawRetentionSetCluster, cluster, store.Params{"table": local, "days": strconv.Itoa(days)}); err != nil {
			return fmt.Errorf("set %s retention to %d days on cluster %s: %w", local, days, cluster, err)
		}
		if logger != nil {
			logger.With("component", "migrate").Info("raw event retention changed", "table", local, "cluster", cluster, "from_days", cur, "to_days", days)
		}
	}
	return nil
}

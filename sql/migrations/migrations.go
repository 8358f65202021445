// Package migrations holds Viewcount's schema: the numbered migrations
// every store runs at start (NNN_name.sql, applied in order and recorded in
// schema_migrations), and the same schema for a ClickHouse cluster
// (cluster/NNN_name.sql, applied with --cluster). Every file is embedded in
// the binary. Apply and ApplyCluster run them on a store; ApplyRawRetention
// sets how long views_raw and the rollups that keep a row per view keep
// them (--raw-retention), the one schema setting that comes from a flag.
//
// It imports no role: every role's tests set up their store with Apply,
// and the schema is the one thing all of them agree on.
package migrations

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/viewcount/viewcount/sql/queries"
)

//go:embed *.sql cluster/*.sql
var files embed.FS

// Migration is one numbered schema change, from NNN_name.sql.
// Statements are run in order; each is idempotent (IF NOT EXISTS), so a
// migration interrupted half way can simply be run again.
type Migration struct {
	Version    int
	Name       string // file name without the number and extension, e.g. "views_raw"
	Statements []string
}

// All returns every migration, sorted by version. It fails only if a
// file is misnamed or two share a version, which a test catches.
func All() ([]Migration, error) { return readMigrations(".") }

// readMigrations reads dir's NNN_name.sql files, sorted by version.
func readMigrations(dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(files, dir)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	var ms []Migration
	seen := make(map[int]string)
	for _, e := range entries {
		if e.IsDir() {
			continue // cluster/, read on its own
		}
		name := e.Name()
		num, rest, ok := strings.Cut(strings.TrimSuffix(name, ".sql"), "_")
		version, err := strconv.Atoi(num)
		if !ok || err != nil || version <= 0 || rest == "" {
			return nil, fmt.Errorf("migration %q: want NNN_name.sql", name)
		}
		if prev, dup := seen[version]; dup {
			return nil, fmt.Errorf("migrations %q and %q share version %d", prev, name, version)
		}
		seen[version] = name
		text, err := fs.ReadFile(files, path.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("read migration %q: %w", name, err)
		}
		stmts := queries.Split(string(text))
		if len(stmts) == 0 {
			return nil, fmt.Errorf("migration %q has no statements", name)
		}
		ms = append(ms, Migration{Version: version, Name: rest, Statements: stmts})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	return ms, nil
}

// Cluster returns the cluster schema (cluster/NNN_name.sql: the state
// migrations/ leave, as ON CLUSTER DDL of Replicated local tables and
// Distributed tables over them) for the cluster named cluster, each
// statement put through OnCluster.
func Cluster(cluster string) ([]Migration, error) {
	ms, err := readMigrations("cluster")
	if err != nil {
		return nil, err
	}
	for i := range ms {
		for j, st := range ms[i].Statements {
			if ms[i].Statements[j], err = OnCluster(st, cluster); err != nil {
				return nil, err
			}
		}
	}
	return ms, nil
}

// ErrClusterName is returned (wrapped) for a cluster name that is not a
// plain name.
var ErrClusterName = errors.New("cluster name: want letters, digits, '_', '-' or '.'")

var clusterName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

// OnCluster puts the cluster's name where a statement says '{cluster}'
// (ON CLUSTER '{cluster}', Distributed('{cluster}', …)). It is the one
// place Go writes into SQL text: ClickHouse binds no parameter in ON
// CLUSTER, and the name is checked to be a plain name first, so it cannot
// leave its quotes. {shard} and {replica} are left to the servers' macros.
func OnCluster(stmt, cluster string) (string, error) {
	if !clusterName.MatchString(cluster) {
		return "", fmt.Errorf("%w: %q", ErrClusterName, cluster)
	}
	return strings.ReplaceAll(stmt, "'{cluster}'", "'"+cluster+"'"), nil
}

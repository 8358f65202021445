package sqlhttp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// clickhouse-go over HTTP (what Grafana's ClickHouse data source and many
// Go tools use) reads Native blocks from the endpoint.
func TestClickHouseGoHTTP(t *testing.T) {
	f := setup(t)
	conn := clickhouse.OpenDB(&clickhouse.Options{
		Addr:     []string{strings.TrimPrefix(f.url, "http://")},
		Protocol: clickhouse.HTTP,
		Auth:     clickhouse.Auth{Database: f.db, Username: "grafana", Password: f.token},
	})
	t.Cleanup(func() { _ = conn.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	rows, err := conn.QueryContext(ctx, "SELECT page, count() AS views FROM views_raw WHERE verdict = {v:String} GROUP BY page ORDER BY page", clickhouse.Named("v", "valid"))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var page string
		var views uint64
		if err := rows.Scan(&page, &views); err != nil {
			t.Fatal(err)
		}
		got = append(got, page+"="+string(rune('0'+views)))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "/x=2,/y=1" {
		t.Errorf("rows: %v, want /x=2,/y=1", got)
	}
	if _, err := conn.ExecContext(ctx, "DROP TABLE views_raw"); err == nil || !strings.Contains(err.Error(), "164") {
		t.Errorf("DROP through clickhouse-go: %v, want code 164", err)
	}
}

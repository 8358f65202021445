//go:build faults

package store_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/store"
)

// The fault suite depends on the hook failing exactly while the control
// file exists, and on the store working again the moment it is gone.
func TestFaultHookFollowsControlFile(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(store.FaultDirEnv, dir)
	s := migrated(t, openTestStore)
	rows := []viewcount.Verdict{{Event: viewcount.Event{Time: time.Now(), Site: "faults.example", Page: "/", ID: "fault-1"}, Reason: viewcount.Valid}}
	down := filepath.Join(dir, store.FaultStoreDown)

	if err := os.WriteFile(down, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertViews(t.Context(), "fault-hook-1", rows); !errors.Is(err, store.ErrInjected) {
		t.Fatalf("insert during outage: %v, want ErrInjected", err)
	}
	if err := s.Ping(t.Context()); !errors.Is(err, store.ErrInjected) {
		t.Fatalf("ping during outage: %v, want ErrInjected", err)
	}
	if err := os.Remove(down); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertViews(t.Context(), "fault-hook-1", rows); err != nil {
		t.Fatalf("insert after outage: %v", err)
	}
	res, err := s.Query(t.Context(), "SELECT count() FROM views_raw WHERE event_id = 'fault-1'", nil)
	if err != nil || len(res.TextRows()) != 1 || res.TextRows()[0][0] != "1" {
		t.Fatalf("rows after outage: %v, %v; want 1", res, err)
	}
}

//go:build faults

package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/viewcount/viewcount"
)

// FaultDirEnv names the directory the fault-injection suite (test/faults)
// controls a faults build through: while the file FaultStoreDown exists in
// it, every call of the store fails as if the engine were unreachable. A
// file, not a signal or an API, so the suite can start and end an outage at
// an exact moment from outside the process and the process needs no code
// path a production build would carry.
const (
	FaultDirEnv    = "VIEWCOUNT_FAULT_DIR"
	FaultStoreDown = "store-down"
)

// ErrInjected is what a call fails with during an injected outage.
var ErrInjected = errors.New("injected store fault")

// withFaults wraps s when the fault directory is configured.
func withFaults(s Store) Store {
	dir := os.Getenv(FaultDirEnv)
	if dir == "" {
		return s
	}
	return &faultStore{Store: s, down: filepath.Join(dir, FaultStoreDown)}
}

// faultStore fails every call while its control file exists. Close is
// never failed: shutdown must release the engine whatever the test does.
type faultStore struct {
	Store
	down string
}

func (f *faultStore) fault(op string) error {
	if _, err := os.Stat(f.down); err == nil {
		return fmt.Errorf("store: %s: %w", op, ErrInjected)
	}
	return nil
}

func (f *faultStore) Exec(ctx context.Context, query string, params Params) error {
	if err := f.fault("exec"); err != nil {
		return err
	}
	return f.Store.Exec(ctx, query, params)
}

func (f *faultStore) Query(ctx context.Context, query string, params Params) (*Result, error) {
	if err := f.fault("query"); err != nil {
		return nil, err
	}
	return f.Store.Query(ctx, query, params)
}

func (f *faultStore) InsertViews(ctx context.Context, token string, rows []viewcount.Verdict) error {
	if err := f.fault("insert views"); err != nil {
		return err
	}
	return f.Store.InsertViews(ctx, token, rows)
}

func (f *faultStore) Ping(ctx context.Context) error {
	if err := f.fault("ping"); err != nil {
		return err
	}
	return f.Store.Ping(ctx)
}

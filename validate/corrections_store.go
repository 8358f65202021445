package validate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/validate/judge"
)

// Execer writes and reads the store.
type Execer interface {
	RawStore
	Exec(ctx context.Context, query string, params store.Params) error
}

// AddCorrection checks c, gives it an id and records it (who, why): from
// then on validators starting a partition exclude what it names. The past
// needs a revalidation of its range.
func AddCorrection(ctx context.Context, q Execer, c viewcount.Correction, who, why string) (viewcount.Correction, error) {
	if err := c.Check(); err != nil {
		return c, err
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	c.ID = "c" + hex.EncodeToString(b)
	return c, recordCorrection(ctx, q, "add", c, who, why)
}

// UndoCorrection records that the correction id is undone; ok is false
// when there is no such correction in force.
func UndoCorrection(ctx context.Context, q Execer, id, who, why string) (c viewcount.Correction, ok bool, err error) {
	all, err := ListCorrections(ctx, q)
	if err != nil {
		return c, false, err
	}
	for _, r := range all {
		if r.ID == id && r.State == "active" {
			return r.Correction, true, recordCorrection(ctx, q, "undo", r.Correction, who, why)
		}
	}
	return c, false, nil
}

func recordCorrection(ctx context.Context, q Execer, action string, c viewcount.Correction, who, why string) error {
	err := q.Exec(ctx, queries.Text(queries.CorrectionsRecord), store.Params{"id": c.ID, "action": action, "who": who, "why": why,
		"site": c.Site, "kind": c.Kind, "value": c.Value, "from": ms(c.From), "to": ms(c.To)})
	if err != nil {
		return fmt.Errorf("validate: record correction %s (%s): %w", c.ID, action, err)
	}
	return nil
}

// ListCorrections reads every correction with its state, newest first.
func ListCorrections(ctx context.Context, q RawStore) ([]viewcount.CorrectionRecord, error) {
	res, err := q.Query(ctx, queries.Text(queries.CorrectionsList), nil)
	if err != nil {
		return nil, fmt.Errorf("validate: list corrections: %w", err)
	}
	rows, err := store.ScanAll[queries.CorrectionsListRow](res)
	if err != nil {
		return nil, fmt.Errorf("validate: list corrections: %w", err)
	}
	out := make([]viewcount.CorrectionRecord, 0, len(rows))
	for _, row := range rows {
		t := func(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
		r := viewcount.CorrectionRecord{Correction: viewcount.Correction{ID: row.Id, Site: row.Site, Kind: row.Kind, Value: row.Value, From: t(row.RangeFrom), To: t(row.RangeTo)},
			State: row.State, AddedAt: t(row.AddedAt), AddedBy: row.AddedBy, AddedWhy: row.AddedWhy}
		if r.State == "undone" {
			u := t(row.UndoneAt)
			r.UndoneAt, r.UndoneBy, r.UndoneWhy = &u, row.UndoneBy, row.UndoneWhy
		}
		out = append(out, r)
	}
	return out, nil
}

// ActiveCorrections are the corrections in force, oldest first (the order
// is part of the rule set's version).
func ActiveCorrections(ctx context.Context, q RawStore) ([]viewcount.Correction, error) {
	all, err := ListCorrections(ctx, q)
	if err != nil {
		return nil, err
	}
	var out []viewcount.Correction
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].State == "active" {
			out = append(out, all[i].Correction)
		}
	}
	return out, nil
}

// WithCorrections is cfg with the corrections in force now, and that rule
// set: what a validator's partition and a
// revalidation judge with.
func WithCorrections(ctx context.Context, q RawStore, cfg judge.Config) (judge.Config, judge.RuleSet, error) {
	cs, err := ActiveCorrections(ctx, q)
	if err != nil {
		return cfg, judge.RuleSet{}, err
	}
	cfg.Corrections = cs
	return cfg, cfg.RuleSet(), nil
}

package validate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	vcsql "github.com/viewcount/viewcount/sql"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/validate/judge"
)

// CorrectionRecord is a correction with its audit trail.
type CorrectionRecord struct {
	judge.Correction
	State     string     `json:"state"` // active | undone
	AddedAt   time.Time  `json:"added_at"`
	AddedBy   string     `json:"added_by"`
	AddedWhy  string     `json:"added_why"`
	UndoneAt  *time.Time `json:"undone_at,omitempty"`
	UndoneBy  string     `json:"undone_by,omitempty"`
	UndoneWhy string     `json:"undone_why,omitempty"`
}

// Execer writes and reads the store.
type Execer interface {
	RawStore
	Exec(ctx context.Context, query string, params store.Params) error
}

// AddCorrection checks c, gives it an id and records it (who, why): from
// then on validators starting a partition exclude what it names. The past
// needs a revalidation of its range.
func AddCorrection(ctx context.Context, q Execer, c judge.Correction, who, why string) (judge.Correction, error) {
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
func UndoCorrection(ctx context.Context, q Execer, id, who, why string) (c judge.Correction, ok bool, err error) {
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

func recordCorrection(ctx context.Context, q Execer, action string, c judge.Correction, who, why string) error {
	err := q.Exec(ctx, vcsql.Query(vcsql.CorrectionsRecord), store.Params{"id": c.ID, "action": action, "who": who, "why": why,
		"site": c.Site, "kind": c.Kind, "value": c.Value, "from": ms(c.From), "to": ms(c.To)})
	if err != nil {
		return fmt.Errorf("validate: record correction %s (%s): %w", c.ID, action, err)
	}
	return nil
}

// ListCorrections reads every correction with its state, newest first.
func ListCorrections(ctx context.Context, q RawStore) ([]CorrectionRecord, error) {
	res, err := q.Query(ctx, vcsql.Query(vcsql.CorrectionsList), nil)
	if err != nil {
		return nil, fmt.Errorf("validate: list corrections: %w", err)
	}
	out := make([]CorrectionRecord, 0, len(res.Rows))
	for _, row := range res.Rows {
		t := func(i int) time.Time { n, _ := strconv.ParseInt(row[i], 10, 64); return time.UnixMilli(n).UTC() }
		r := CorrectionRecord{Correction: judge.Correction{ID: row[0], Site: row[2], Kind: row[3], Value: row[4], From: t(5), To: t(6)},
			State: row[1], AddedAt: t(7), AddedBy: row[8], AddedWhy: row[9]}
		if r.State == "undone" {
			u := t(10)
			r.UndoneAt, r.UndoneBy, r.UndoneWhy = &u, row[11], row[12]
		}
		out = append(out, r)
	}
	return out, nil
}

// ActiveCorrections are the corrections in force, oldest first (the order
// is part of the rule set's version).
func ActiveCorrections(ctx context.Context, q RawStore) ([]judge.Correction, error) {
	all, err := ListCorrections(ctx, q)
	if err != nil {
		return nil, err
	}
	var out []judge.Correction
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

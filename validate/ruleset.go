package validate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/validate/judge"
)

// ActiveRulesKey is the VC_RULES key naming the rule set the validator
// that started last runs.
const ActiveRulesKey = "active"

// RecordedRuleSet is a rule set as VC_RULES keeps it, under its version.
type RecordedRuleSet struct {
	judge.RuleSet
	FirstSeen time.Time `json:"first_seen"`
}

// RegisterRuleSet records rs in the VC_RULES bucket (once per version,
// with when it was first seen) and names it the active one.
func RegisterRuleSet(ctx context.Context, kv jetstream.KeyValue, rs judge.RuleSet, now time.Time) error {
	b, err := json.Marshal(RecordedRuleSet{RuleSet: rs, FirstSeen: now.UTC()})
	if err != nil {
		return fmt.Errorf("validate: rule set %s: %w", rs.Version, err)
	}
	if _, err := kv.Create(ctx, rs.Version, b); err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("validate: record rule set %s: %w", rs.Version, err)
	}
	if _, err := kv.PutString(ctx, ActiveRulesKey, rs.Version); err != nil {
		return fmt.Errorf("validate: activate rule set %s: %w", rs.Version, err)
	}
	return nil
}

// registerRules records the validator's rule set in VC_RULES before it
// judges anything, retrying a few times; a store of rule sets that stays
// unreachable is logged and does not stop validation (the verdicts carry
// the version either way, GET /v1/admin/rules then lacks its settings).
func (v *Validator) registerRules(ctx context.Context) {
	var err error
	for attempt := range 5 {
		var kv jetstream.KeyValue
		if kv, err = v.js.KeyValue(ctx, viewcount.BucketRules); err == nil {
			if err = RegisterRuleSet(ctx, kv, v.rules, v.opts.Now()); err == nil {
				v.logger.Info("rule set", "version", v.rules.Version)
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(attempt+1) * 200 * time.Millisecond):
		}
	}
	v.logger.Error("rule set not recorded", "version", v.rules.Version, "err", err)
}

// currentRules is the validator's rule configuration with the operators'
// corrections in force now (read from the store, when the validator has
// one), and its rule set's version. A partition takes them at its start: a
// correction added or undone reaches the validators through the
// revalidation that applies it, which restarts every partition. A version
// not seen before is recorded in VC_RULES.
func (v *Validator) currentRules(ctx context.Context) (judge.Config, string, error) {
	cfg := v.cfg
	if v.opts.Raw == nil {
		return cfg, v.rules.Version, nil
	}
	cfg, rs, err := WithCorrections(ctx, v.opts.Raw, cfg)
	if err != nil {
		return cfg, "", err
	}
	if rs.Version != v.rules.Version {
		if kv, err := v.js.KeyValue(ctx, viewcount.BucketRules); err == nil {
			if err := RegisterRuleSet(ctx, kv, rs, v.opts.Now()); err != nil {
				v.logger.Warn("rule set not recorded", "version", rs.Version, "err", err)
			}
		}
	}
	return cfg, rs.Version, nil
}

package validate

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
)

// lists are the built-in lists the rules read, hashed into the rule set.
//
//go:embed lists
var lists embed.FS

// ruleModules are the Go modules whose data decides verdicts (user-agent
// lists and parsers): their versions are part of the rule set.
var ruleModules = []string{"github.com/x-way/crawlerdetect", "github.com/medama-io/go-useragent"}

// RuleSet is what decides verdicts: every setting of Config that the rules
// read, the content of every built-in list and the versions of the rule
// libraries. Its Version, a hash of all that, is recorded on every verdict
// (views_raw.rules), so a count can say which rules judged it and
// revalidation knows what to redo. Capacities (MaxKeys, MaxHeld) are left
// out: they follow the process's partition count, not the operator's
// intent, and change a verdict only at the margins.
type RuleSet struct {
	Version  string            `json:"version"`
	Settings map[string]string `json:"settings"`
}

// capacities are the Config fields not in the rule set.
var capacities = map[string]bool{"MaxKeys": true, "MaxHeld": true}

// RuleSet describes c.
func (c Config) RuleSet() RuleSet {
	set := map[string]string{}
	v := reflect.ValueOf(c)
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if !f.IsExported() || capacities[f.Name] {
			continue
		}
		set[f.Name] = settingText(v.Field(i))
	}
	_ = fs.WalkDir(lists, "lists", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := lists.ReadFile(path)
			set["list "+path] = digest(b)
		}
		return nil
	})
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if slices.Contains(ruleModules, m.Path) {
				set["module "+m.Path] = m.Version
			}
		}
	}
	b, _ := json.Marshal(set) // map keys are sorted: the same set, the same bytes
	return RuleSet{Version: digest(b)[:12], Settings: set}
}

// settingText is how a setting reads in a rule set: lists by their size
// and a digest of their entries in order (an operator's file of thousands
// of patterns would not fit), everything else as Go prints it.
func settingText(v reflect.Value) string {
	if v.Kind() != reflect.Slice {
		if d, ok := v.Interface().(time.Duration); ok {
			return d.String()
		}
		return fmt.Sprint(v.Interface())
	}
	parts := make([]string, v.Len())
	for i := range parts {
		parts[i] = fmt.Sprint(v.Index(i).Interface())
	}
	return fmt.Sprintf("%d entries, %s", len(parts), digest([]byte(strings.Join(parts, "\n")))[:12])
}

func digest(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// ActiveRulesKey is the VC_RULES key naming the rule set the validator
// that started last runs.
const ActiveRulesKey = "active"

// RecordedRuleSet is a rule set as VC_RULES keeps it, under its version.
type RecordedRuleSet struct {
	RuleSet
	FirstSeen time.Time `json:"first_seen"`
}

// RegisterRuleSet records rs in the VC_RULES bucket (once per version,
// with when it was first seen) and names it the active one.
func RegisterRuleSet(ctx context.Context, kv jetstream.KeyValue, rs RuleSet, now time.Time) error {
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
func (v *Validator) currentRules(ctx context.Context) (Config, string, error) {
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

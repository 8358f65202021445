package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
)

// RuleSets is the VC_RULES bucket as GET /v1/admin/rules reads it: each
// rule set a validator ran, under its version, and "active".
type RuleSets interface {
	Get(ctx context.Context, key string) (jetstream.KeyValueEntry, error)
	ListKeys(ctx context.Context, opts ...jetstream.WatchOpt) (jetstream.KeyLister, error)
}

// activeKey is validate.ActiveRulesKey (the api does not import the
// validator).
const activeKey = "active"

// ruleSet is one rule set as the endpoint shows it: its settings, when a
// validator first ran it, the events it judged, and what changed from the
// rule set before it.
type ruleSet struct {
	Version   string            `json:"version"`
	FirstSeen time.Time         `json:"first_seen"`
	Settings  map[string]string `json:"settings"`
	Events    uint64            `json:"events"`
	Valid     uint64            `json:"valid"`
	// FirstEvent and LastEvent bound the receive times of its events.
	FirstEvent string `json:"first_event,omitempty"`
	LastEvent  string `json:"last_event,omitempty"`
	// Changes from the rule set first seen before this one (none for the
	// first).
	Changes []settingChange `json:"changes"`
}

type settingChange struct {
	Setting string `json:"setting"`
	From    string `json:"from"` // "" when the setting is new
	To      string `json:"to"`   // "" when it is gone
}

// ruleSets answers GET /v1/admin/rules: the active rule set's version and
// every recorded one, oldest first, each with its differences from the
// one before. Events stored before rule sets were recorded are counted
// under the version "".
func (s *Server) ruleSets(c *gin.Context) {
	if s.cfg.RuleSets == nil {
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": "this process does not read the rule sets (no stream)"})
		return
	}
	ctx := c.Request.Context()
	sets, active, err := s.readRuleSets(ctx)
	if err != nil {
		s.fail(c, err)
		return
	}
	res, err := s.q.Query(ctx, queries.Text(queries.RuleVersions), nil)
	if err != nil {
		s.fail(c, fmt.Errorf("api: events by rule set: %w", err))
		return
	}
	byVersion := map[string]*ruleSet{}
	for i := range sets {
		byVersion[sets[i].Version] = &sets[i]
	}
	var unversioned *ruleSet
	rows, err := store.ScanAll[queries.RuleVersionsRow](res)
	if err != nil {
		s.fail(c, fmt.Errorf("api: events by rule set: %w", err))
		return
	}
	for _, row := range rows {
		rs := byVersion[row.Rules]
		if rs == nil { // "" or a version whose record is missing
			rs = &ruleSet{Version: row.Rules, Settings: map[string]string{}, Changes: []settingChange{}}
			if row.Rules == "" {
				unversioned = rs
			} else {
				sets = append(sets, *rs)
				rs = &sets[len(sets)-1]
			}
		}
		rs.Events, rs.Valid, rs.FirstEvent, rs.LastEvent = row.Events, row.Valid, row.First, row.Last
	}
	out := gin.H{"active": active, "rule_sets": sets}
	if unversioned != nil {
		out["unversioned"] = gin.H{"events": unversioned.Events, "valid": unversioned.Valid,
			"first_event": unversioned.FirstEvent, "last_event": unversioned.LastEvent}
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, out)
}

// readRuleSets returns the recorded rule sets, oldest first, each with its
// changes from the one before, and the active version.
func (s *Server) readRuleSets(ctx context.Context) ([]ruleSet, string, error) {
	lister, err := s.cfg.RuleSets.ListKeys(ctx)
	if err != nil && !errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, "", fmt.Errorf("api: list rule sets: %w", err)
	}
	var keys []string
	if lister != nil {
		for k := range lister.Keys() {
			keys = append(keys, k)
		}
		_ = lister.Stop() // the listing is over: its subscription is gone already
	}
	var sets []ruleSet
	active := ""
	for _, k := range keys {
		e, err := s.cfg.RuleSets.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return nil, "", fmt.Errorf("api: rule set %s: %w", k, err)
		}
		if k == activeKey {
			active = string(e.Value())
			continue
		}
		var rs ruleSet
		if err := json.Unmarshal(e.Value(), &rs); err != nil {
			return nil, "", fmt.Errorf("api: rule set %s: %w", k, err)
		}
		sets = append(sets, rs)
	}
	slices.SortFunc(sets, func(a, b ruleSet) int { return a.FirstSeen.Compare(b.FirstSeen) })
	for i := range sets {
		sets[i].Changes = []settingChange{}
		if i > 0 {
			sets[i].Changes = changes(sets[i-1].Settings, sets[i].Settings)
		}
	}
	return sets, active, nil
}

// changes lists the settings that differ between from and to, by name.
func changes(from, to map[string]string) []settingChange {
	out := []settingChange{}
	for k, v := range to {
		if from[k] != v {
			out = append(out, settingChange{Setting: k, From: from[k], To: v})
		}
	}
	for k, v := range from {
		if _, ok := to[k]; !ok {
			out = append(out, settingChange{Setting: k, From: v})
		}
	}
	slices.SortFunc(out, func(a, b settingChange) int { return strings.Compare(a.Setting, b.Setting) })
	return out
}

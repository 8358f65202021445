package judge

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// lists are the built-in lists the rules read, hashed into the rule set.
//
//go:embed lists
var lists embed.FS

// ruleModules are the Go modules whose data decides verdicts (user-agent
// lists and parsers): their versions are part of the rule set.
var ruleModules = []string{"github.com/x-way/crawlerdetect", "github.com/medama-io/go-useragent"}

// RuleSet is what decides verdicts: the revision of the rules' code, every
// setting of Config that the rules read, the content of every built-in
// list and the versions of the rule libraries. Its Version, a hash of all that, is recorded on every verdict
// (views_raw.rules), so a count can say which rules judged it and
// revalidation knows what to redo. Capacities (MaxKeys, MaxHeld) are left
// out: they follow the process's partition count, not the operator's
// intent, and change a verdict only at the margins.
type RuleSet struct {
	Version  string            `json:"version"`
	Settings map[string]string `json:"settings"`
}

// codeRevision names the rules' code in the rule set: a change to a rule's
// code that changes verdicts gives it a new value, so the rule set, and
// so its version, changes with it (what the settings alone would not
// show), and revalidation can find the views the old code judged.
const codeRevision = "3: engagement reports and visits (visits.go)"

// capacities are the Config fields not in the rule set.
var capacities = map[string]bool{"MaxKeys": true, "MaxHeld": true, "MaxOpenViews": true, "MaxVisits": true}

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
	set["code"] = codeRevision
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

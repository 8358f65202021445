package judge

import (
	"strings"
	"testing"
	"time"
)

// A rule set's version follows every setting that decides verdicts and
// nothing else; its settings say what changed.
func TestRuleSetVersion(t *testing.T) {
	base := DefaultConfig().RuleSet()
	if again := DefaultConfig().RuleSet(); again.Version != base.Version || len(base.Version) != 12 {
		t.Fatalf("versions %q and %q of the same config", base.Version, again.Version)
	}
	for _, k := range []string{"code", "DuplicateWindow", "ExtraBotPatterns", "list lists/hosting-asns.txt", "list lists/referrer-spam.txt"} {
		if base.Settings[k] == "" {
			t.Errorf("setting %q missing: %v", k, base.Settings)
		}
	}
	// Capacities follow the partition count, not the rules.
	c := DefaultConfig()
	c.MaxKeys, c.MaxHeld = 7, 9
	if v := c.RuleSet().Version; v != base.Version {
		t.Errorf("capacities changed the version: %s", v)
	}
	for name, change := range map[string]func(*Config){
		"DuplicateWindow":  func(c *Config) { c.DuplicateWindow = 20 * time.Minute },
		"ExtraBotPatterns": func(c *Config) { c.ExtraBotPatterns = []string{"acmebot"} },
		"IgnoreHeaders":    func(c *Config) { c.IgnoreHeaders = true },
		"ExtraHostingASNs": func(c *Config) { c.ExtraHostingASNs = []uint32{64512} },
	} {
		c := DefaultConfig()
		change(&c)
		rs := c.RuleSet()
		if rs.Version == base.Version {
			t.Errorf("%s: same version", name)
		}
		for k, v := range rs.Settings {
			if (base.Settings[k] != v) != (k == name) {
				t.Errorf("%s: setting %s %q → %q", name, k, base.Settings[k], v)
			}
		}
	}
	c = DefaultConfig()
	c.ExtraBotPatterns = []string{"acmebot", "otherbot"}
	if got := c.RuleSet().Settings["ExtraBotPatterns"]; !strings.HasPrefix(got, "2 entries, ") {
		t.Errorf("a list reads %q", got)
	}
}

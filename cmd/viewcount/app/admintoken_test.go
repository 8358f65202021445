package app

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAdminTokenFlagWarns: an admin token given as --admin-token sits in
// the process's command line, which every local user can read
// (/proc/PID/cmdline, ps). Found by an attacker's probe. The server and
// the admin clients still take it, but warn, and offer the environment
// and a file instead, which earn no warning; the warning never repeats
// the token.
func TestAdminTokenFlagWarns(t *testing.T) {
	const secret = "vca_flagsecret0123456789"
	c, err := ParseConfig("serve", []string{"--admin-token", secret})
	if err != nil || !c.API.AdminTokenFlag || c.API.AdminToken != secret {
		t.Fatalf("--admin-token: flag %v token %q err %v", c.API.AdminTokenFlag, c.API.AdminToken, err)
	}
	file := filepath.Join(t.TempDir(), "admin_token")
	if err := os.WriteFile(file, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseConfig("serve", []string{"--admin-token", secret, "--admin-token-file", file}); err == nil {
		t.Error("--admin-token with --admin-token-file: accepted")
	}
	c, err = ParseConfig("serve", []string{"--admin-token-file", file})
	if err != nil || c.API.AdminTokenFlag || c.API.AdminTokenFile != file {
		t.Fatalf("--admin-token-file: flag %v file %q err %v", c.API.AdminTokenFlag, c.API.AdminTokenFile, err)
	}
	if got, err := NewMain(c, Roles{}, slog.New(slog.DiscardHandler), io.Discard, time.Now).adminToken(); err != nil || got != secret {
		t.Fatalf("token from --admin-token-file: %q, %v", got, err)
	}
	t.Setenv("VIEWCOUNT_ADMIN_TOKEN", secret)
	if c, err := ParseConfig("serve", nil); err != nil || c.API.AdminTokenFlag || c.API.AdminToken != secret {
		t.Fatalf("VIEWCOUNT_ADMIN_TOKEN: flag %v token %q err %v", c.API.AdminTokenFlag, c.API.AdminToken, err)
	}

	// The server warns when it starts (an ingest-only process is enough:
	// the warning comes before any role).
	var logs bytes.Buffer
	cfg := Config{Listen: "127.0.0.1:0", Data: t.TempDir()}
	cfg.API.PublicLag, cfg.Stream.Partitions, cfg.Stream.Retention = time.Second, 1, 72*time.Hour
	cfg.API.AdminToken, cfg.API.AdminTokenFlag, cfg.Ingest.CountryDB, cfg.Ingest.ASNDB = secret, true, "off", "off"
	m := NewMain(cfg, Roles{Ingest: true}, slog.New(slog.NewTextHandler(&logs, nil)), io.Discard, time.Now)
	if err := m.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	m.Close()
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "VIEWCOUNT_ADMIN_TOKEN") ||
		strings.Contains(logs.String(), secret) {
		t.Errorf("server log with --admin-token: want a warning naming the alternatives, never the token:\n%s", logs.String())
	}

	// The admin clients against a real server: the flag works and warns,
	// the variable and the file work silently.
	srv := Start(t, t.TempDir(), NewDB())
	base := "http://" + srv.Addr()
	site := func(env string, args ...string) (stdout, stderr string, err error) {
		t.Helper()
		t.Setenv("VIEWCOUNT_ADMIN_TOKEN", env)
		var o, e bytes.Buffer
		err = Run(append([]string{"site", "list", "--json", "--server", base, "--data", t.TempDir()}, args...), &o, &e)
		return o.String(), e.String(), err
	}
	for _, tc := range []struct {
		name, env string
		args      []string
		warn      bool
	}{
		{"--admin-token", "", []string{"--admin-token", AdminToken}, true},
		{"VIEWCOUNT_ADMIN_TOKEN", AdminToken, nil, false},
		{"--admin-token-file", "", []string{"--admin-token-file", writeToken(t, AdminToken)}, false},
	} {
		out, warn, err := site(tc.env, tc.args...)
		if err != nil || !strings.Contains(out, `"sites"`) {
			t.Errorf("%s: site list: %v %q", tc.name, err, out)
		}
		if got := strings.Contains(warn, "warning: --admin-token on the command line"); got != tc.warn || strings.Contains(warn, AdminToken) {
			t.Errorf("%s: stderr %q: want a warning %v, never the token", tc.name, warn, tc.warn)
		}
	}
}

func writeToken(t *testing.T, token string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(p, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

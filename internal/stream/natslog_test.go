package stream

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/viewcount/viewcount/internal/redact"
)

func TestMaskAddrs(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := redact.Addresses(in); got != want {
			t.Errorf("redact.Addresses(%q) = %q, want %q", in, got, want)
		}
	}
	f("203.0.113.7:4222 - cid:5 - Slow Consumer", "<address> - cid:5 - Slow Consumer")
	f("[2001:db8::1]:4222 - cid:9 - closed", "<address> - cid:9 - closed")
	f("peer 2001:db8:0:1::7 left.", "peer <address> left.")
	f("from 10.0.0.1.", "from <address>.")
	f("::1 - rid:3", "<address> - rid:3")
	f("Took 12:34:56 to start, version 2.15.2", "Took 12:34:56 to start, version 2.15.2")
	f("Starting JetStream", "Starting JetStream")
	f("pipe - cid:4 - Client connection closed", "pipe - cid:4 - Client connection closed")
	f("cid:12", "cid:12")
}

func TestNATSLoggerLevels(t *testing.T) {
	var buf bytes.Buffer
	l := newNATSLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	l.Noticef("  Version:  %s", "2.15.2")
	l.starting.Store(false)
	l.Noticef("Starting %s", "JetStream")
	l.Warnf("slow %d", 1)
	l.Errorf("JetStream failed to store a msg from 198.51.100.2:1234: %s", "too many open files")
	l.Fatalf("boom")
	l.Debugf("debug %s", "line")
	l.Tracef("trace %s", "line")
	out := buf.String()
	for _, want := range []string{
		`level=DEBUG msg="  Version:  2.15.2" component=nats`,
		`level=INFO msg="Starting JetStream" component=nats`,
		`level=WARN msg="slow 1" component=nats`,
		`level=ERROR msg="JetStream failed to store a msg from <address>: too many open files" component=nats`,
		`level=ERROR msg=boom component=nats`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "198.51.100.2") || strings.Contains(out, "debug line") || strings.Contains(out, "trace line") {
		t.Errorf("log has an address or a debug/trace line:\n%s", out)
	}
}

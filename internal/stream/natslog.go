package stream

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/viewcount/viewcount/internal/redact"
)

// natsLogger puts the embedded server's notices, warnings and errors into
// our log (component "nats"), so a store write error or JetStream disabling
// itself is seen where the operator looks; it implements server.Logger.
// Debug and trace are off in SetLoggerV2 and dropped here as well: they
// carry protocol lines, never needed in production.
//
// Our clients are in-process (their address is "pipe"), so the server has
// no client address to log; addresses are still masked in case a future
// code path logs one (invariant 3: no raw IP in a log line).
//
// While the server starts, its notices (a banner of some 25 lines, the
// limits, each stream restored) go to debug: one line of ours says it
// started, and its warnings and errors stay at their level.
type natsLogger struct {
	l        *slog.Logger
	starting atomic.Bool
}

func newNATSLogger(l *slog.Logger) *natsLogger {
	n := &natsLogger{l: l.With("component", "nats")}
	n.starting.Store(true)
	return n
}

func (n *natsLogger) log(level slog.Level, format string, v []any) {
	ctx := context.Background()
	if !n.l.Enabled(ctx, level) {
		return
	}
	n.l.Log(ctx, level, redact.Addresses(fmt.Sprintf(format, v...)))
}

func (n *natsLogger) Noticef(format string, v ...any) {
	level := slog.LevelInfo
	if n.starting.Load() {
		level = slog.LevelDebug
	}
	n.log(level, format, v)
}
func (n *natsLogger) Warnf(format string, v ...any)  { n.log(slog.LevelWarn, format, v) }
func (n *natsLogger) Errorf(format string, v ...any) { n.log(slog.LevelError, format, v) }

// Fatalf is logged, not exited on: the server is a library in our process,
// and the supervisor decides what a failed server means.
func (n *natsLogger) Fatalf(format string, v ...any) { n.log(slog.LevelError, format, v) }
func (n *natsLogger) Debugf(string, ...any)          {}
func (n *natsLogger) Tracef(string, ...any)          {}

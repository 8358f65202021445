package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/viewcount/viewcount/api"
	"github.com/viewcount/viewcount/api/sqlhttp"
	"github.com/viewcount/viewcount/internal/redact"
	"github.com/viewcount/viewcount/internal/stream"
	"github.com/viewcount/viewcount/sql/store"
)

// sqlListener is the analysts' read-only SQL endpoint (--sql-listen) and
// what it holds: its own listener and where cleared queries run (the
// embedded store's read-only connection, or a ClickHouse server's
// analyst user).
type sqlListener struct {
	srv  *http.Server
	ln   net.Listener
	ro   readOnly
	done chan struct{}
}

// readOnly runs cleared analyst queries: store.ReadOnly or
// store.UpstreamReadOnly.
type readOnly interface {
	sqlhttp.Querier
	Close() error
}

// startSQL registers the analyst-token admin API and, with --sql-listen,
// serves ClickHouse's HTTP interface on that address. The listener is
// separate from the public one so an operator can keep it on loopback or a
// private network.
func (m *Main) startSQL(ctx context.Context, srv *api.Server, engine gin.IRouter, adminToken string) error {
	tokens, err := stream.OpenTokens(ctx, m.stream, m.now)
	if err != nil {
		return err
	}
	srv.TokenRoutes(engine, tokens)
	if m.cfg.SQL.Listen == "" {
		return nil
	}
	limits := store.Limits{
		MaxExecutionTime: m.cfg.SQL.MaxExecutionTime,
		MaxResultRows:    uint64(m.cfg.SQL.MaxResultRows),
		MaxMemoryUsage:   uint64(m.cfg.SQL.MaxMemoryMB) << 20,
	}
	var ro readOnly
	if m.cfg.SQL.Upstream != "" {
		ro, err = store.OpenReadOnlyUpstream(m.cfg.SQL.Upstream, store.DatabaseName(m.store), limits)
	} else {
		ro, err = store.OpenReadOnly(m.store, limits)
	}
	if err != nil {
		return fmt.Errorf("--sql-listen: %w", err)
	}
	ln, err := net.Listen("tcp", m.cfg.SQL.Listen)
	if err != nil {
		_ = ro.Close()
		return fmt.Errorf("sql listen %s: %w", m.cfg.SQL.Listen, err)
	}
	h := sqlhttp.New(ro, tokens, adminToken, m.cfg.SQL.MaxExecutionTime, m.logger)
	s := &sqlListener{ro: ro, ln: ln, done: make(chan struct{}),
		srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
			IdleTimeout: 2 * time.Minute, ErrorLog: redact.NewLogLogger(m.logger.Handler(), slog.LevelWarn)}}
	m.sql = s
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			m.logger.Error("sql listener stopped", "component", "sqlhttp", "err", err)
		}
	}()
	m.logger.Info("sql serving", "component", "sqlhttp", "addr", ln.Addr().String())
	return nil
}

// SQLAddr is the SQL listener's address once Run returned; "" when off.
func (m *Main) SQLAddr() string {
	if m.sql == nil {
		return ""
	}
	return m.sql.ln.Addr().String()
}

// closeSQL stops the SQL listener, waiting for queries in flight, and
// closes the read-only connection; before the store closes.
func (m *Main) closeSQL() {
	if m.sql == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.sql.srv.Shutdown(ctx); err != nil {
		m.logger.Warn("sql shutdown", "err", err)
	}
	<-m.sql.done
	_ = m.sql.ro.Close()
}

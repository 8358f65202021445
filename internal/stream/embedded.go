package stream

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// embedded is the in-process NATS server, replaceable while clients use it.
// Every client connects through it (it is their nats.InProcessConnProvider),
// so after a restart their reconnect lands on the new server and each
// existing *nats.Conn (publisher, validators, KV watchers) keeps working.
type embedded struct {
	dir        string
	syncAlways bool
	logger     *slog.Logger // the caller's, for the server's own log

	mu  sync.Mutex
	srv *server.Server // nil while restarting or after close
}

// errRestarting makes a reconnecting client wait for the next attempt
// instead of attaching to a server being shut down.
var errRestarting = errors.New("stream: embedded server restarting")

func startEmbedded(dir string, syncAlways bool, logger *slog.Logger) (*embedded, error) {
	e := &embedded{dir: dir, syncAlways: syncAlways, logger: logger}
	srv, err := e.newServer()
	if err != nil {
		return nil, err
	}
	e.srv = srv
	return e, nil
}

func (e *embedded) newServer() (*server.Server, error) {
	srv, err := server.NewServer(&server.Options{
		ServerName: "viewcount-embedded",
		JetStream:  true,
		StoreDir:   e.dir,
		DontListen: true, // reached only in-process; a cluster is for scale-out
		NoSigs:     true,
		SyncAlways: e.syncAlways,
	})
	if err != nil {
		return nil, fmt.Errorf("stream: embedded server: %w", err)
	}
	nl := newNATSLogger(e.logger)
	srv.SetLoggerV2(nl, false, false, false)
	srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		srv.Shutdown()
		srv.WaitForShutdown()
		return nil, errors.New("stream: embedded server not ready after 30s")
	}
	nl.starting.Store(false)
	return srv, nil
}

// InProcessConn hands out a connection to the current server.
func (e *embedded) InProcessConn() (net.Conn, error) {
	srv := e.current()
	if srv == nil {
		return nil, errRestarting
	}
	return srv.InProcessConn()
}

func (e *embedded) current() *server.Server {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.srv
}

// restart shuts the server down and starts a new one on the same store
// dir. JetStream keeps a stream's write error for the stream's lifetime
// (fileStore.werr and stream.werr in nats-server v2.15: once set by
// EMFILE or ENOSPC, every later write fails without an answer), and only
// recreating the stream from its files clears it. Shutdown flushes what
// was written; what a client had acknowledged is on disk and recovered.
// If the new server cannot start, the caller retries later.
func (e *embedded) restart() error {
	e.close()
	srv, err := e.newServer()
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.srv = srv
	e.mu.Unlock()
	return nil
}

// close stops the server; InProcessConn fails until a restart.
func (e *embedded) close() {
	e.mu.Lock()
	old := e.srv
	e.srv = nil
	e.mu.Unlock()
	if old != nil {
		old.Shutdown()
		old.WaitForShutdown()
	}
}

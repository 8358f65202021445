package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// baselineGIF is the 43-byte transparent GIF the real pixel answers with.
var baselineGIF = []byte{
	'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0, 0x80, 0, 0,
	0, 0, 0, 0xff, 0xff, 0xff,
	0x21, 0xf9, 4, 1, 0, 0, 0, 0,
	0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0,
	2, 2, 0x44, 1, 0,
	0x3b,
}

// baselineCount is the answer of the baseline's count endpoint: the shape
// and size of a real one.
var baselineCount = []byte(`{"site":"load.example","page":"/blog/item-1","views":12345,"uniques":6789,"as_of":"2026-11-29T10:00:10Z"}`)

// Baseline is a bare Gin server (release mode, no middleware) answering
// GET /p.gif with the GIF, POST /v1/events with 202 after reading the body
// and GET /v1/sites/{site}/count with a fixed count: the fastest any Gin
// handler on this machine can be, to hold a real run against.
type Baseline struct {
	URL  string
	srv  *http.Server
	done chan error // Serve's result
}

// StartBaseline serves on 127.0.0.1 on a free port until Close.
func StartBaseline() (*Baseline, error) {
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.GET("/p.gif", func(c *gin.Context) {
		c.Header("Cache-Control", "no-store")
		c.Data(http.StatusOK, "image/gif", baselineGIF)
	})
	e.POST("/v1/events", func(c *gin.Context) {
		_, _ = io.Copy(io.Discard, c.Request.Body)
		c.Data(http.StatusAccepted, "application/json; charset=utf-8", []byte(`{"accepted":1}`))
	})
	e.GET("/v1/sites/:site/count", func(c *gin.Context) {
		c.Header("Cache-Control", "public, max-age=10")
		c.Data(http.StatusOK, "application/json; charset=utf-8", baselineCount)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("loadgen: baseline: %w", err)
	}
	b := &Baseline{
		URL:  "http://" + ln.Addr().String(),
		srv:  &http.Server{Handler: e, ReadHeaderTimeout: 10 * time.Second},
		done: make(chan error, 1),
	}
	go func() { b.done <- b.srv.Serve(ln) }()
	return b, nil
}

// Close stops the server and waits for it.
func (b *Baseline) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := b.srv.Shutdown(ctx)
	if serr := <-b.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// Command viewcount runs the Viewcount roles: `serve` runs all of them in one
// process on embedded NATS and chDB; `ingest`, `validate` and `api` run one
// role each against a NATS cluster and a ClickHouse server; `site`
// manages the sites of a running server. The wiring is package app.
package main

import (
	"os"

	"github.com/viewcount/viewcount/cmd/viewcount/app"
)

// version is set at build time (-ldflags "-X main.version=…", the Dockerfile).
var version = "dev"

func main() { os.Exit(app.Execute(os.Args[1:], version)) }

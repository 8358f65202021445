# Viewcount. `make run` starts the service on embedded defaults; `make test`
# runs every test. Both fetch libchdb.so (the embedded ClickHouse engine)
# and the default country database once into a cache, `make test` the
# user-agent evaluation data too; set CHDB_LIB_PATH, VIEWCOUNT_COUNTRY_DB or
# VIEWCOUNT_UADATA to use copies you already have.

CHDB_VERSION  := 26.7.3-stable.1
CACHE_DIR     := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/viewcount
CHDB_LIB_PATH ?= $(CACHE_DIR)/chdb/$(CHDB_VERSION)/libchdb.so
export CHDB_LIB_PATH

# The default country database (ingest/geo): an npm package pinned to a
# version, its file checked against this checksum. GEO_VERSION must match
# geo.Version. To update: change both, run `make geo` once, and put the
# sha256 it reports in GEO_SHA256.
GEO_VERSION := 2.3.2026061719
GEO_SHA256  := c5f7c0e9bd6a6ccb5a2e9634764544a0d08bd0bd8788b8aedfac87bea184c652
VIEWCOUNT_COUNTRY_DB ?= $(CACHE_DIR)/geo/$(GEO_VERSION)/geo-whois-asn-country.mmdb
export VIEWCOUNT_COUNTRY_DB

# The user-agent evaluation data (validate/uaeval, `viewcount ua-eval`):
# bot user agents from crawler-user-agents (MIT) and real-traffic browser
# user agents with their traffic weights from user-agents (BSD-2-Clause),
# both npm packages pinned to a version, the JSON file of each checked
# against its checksum. The versions must match uaeval's constants. To
# update: change both, run `make uadata`, put the sha256 it reports here.
UADATA_BOTS_VERSION   := 1.60.0
UADATA_BOTS_SHA256    := c36c67f2527f1a5340858d540c732ebbc3ec866cfc0c5717de82b22a1f8dc537
UADATA_HUMANS_VERSION := 2.1.198
UADATA_HUMANS_SHA256  := 5432ce503c8d18fb6ac2dd668d019df3fdd94843a9472fda2525507f988e0022
VIEWCOUNT_UADATA ?= $(CACHE_DIR)/uadata
export VIEWCOUNT_UADATA
UADATA_BOTS   := $(VIEWCOUNT_UADATA)/crawler-user-agents-$(UADATA_BOTS_VERSION).json
UADATA_HUMANS := $(VIEWCOUNT_UADATA)/user-agents-$(UADATA_HUMANS_VERSION).json

GO       ?= go
GOFLAGS  ?=
PKGS     := ./...

.PHONY: run build test check bench chdb geo uadata npm fmt vet staticcheck clean

run: chdb geo build
	./bin/viewcount serve

build:
	$(GO) build $(GOFLAGS) -o bin/viewcount ./cmd/viewcount

# -race works with chDB loaded through purego, so every test runs under it.
test: chdb geo uadata jsclient
	$(GO) test $(GOFLAGS) -race -count=1 -timeout 20m $(PKGS)

# What CI runs: formatting, vet, staticcheck, then the tests.
check: fmt vet staticcheck test

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

staticcheck:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.6.1 $(PKGS)

bench: chdb geo
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

chdb: $(CHDB_LIB_PATH)

# The engine ships in the npm package @chdb/lib-linux-x64-gnu; npm pack
# fetches it (about 180 MB packed, 570 MB unpacked) without installing Node
# modules anywhere. Written to a temp name first so an interrupted fetch
# never leaves a truncated library behind.
$(CHDB_LIB_PATH): | npm
	@echo "fetching libchdb $(CHDB_VERSION) into $(dir $@) (once)"
	@mkdir -p "$(dir $@)"
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && cd "$$tmp" && \
	  npm pack --silent @chdb/lib-linux-x64-gnu@$(CHDB_VERSION) >/dev/null && \
	  tar -xzf chdb-lib-linux-x64-gnu-$(CHDB_VERSION).tgz package/libchdb.so && \
	  mv package/libchdb.so "$@.part" && mv "$@.part" "$@"
	@echo "libchdb ready: $@"

# npm fetches the cached files above once; installed with apt-get when
# missing and run as root.
npm:
	@command -v npm >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "npm not found: installing it with apt-get (needed once, to fetch libchdb and the country database)"; \
	    apt-get update -qq && apt-get install -y -qq npm >/dev/null; \
	  else \
	    echo "npm is needed once to fetch libchdb.so and the country database: install Node.js/npm, or set CHDB_LIB_PATH and VIEWCOUNT_COUNTRY_DB to existing files"; exit 1; \
	  fi; }

geo: $(VIEWCOUNT_COUNTRY_DB)

# The country database (7.8 MB, IPv4 and IPv6) from the npm package
# @ip-location-db/geo-whois-asn-country-mmdb; a file whose checksum differs
# from GEO_SHA256 is refused and not cached.
$(VIEWCOUNT_COUNTRY_DB): | npm
	@echo "fetching the country database $(GEO_VERSION) into $(dir $@) (once)"
	@mkdir -p "$(dir $@)"
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && cd "$$tmp" && \
	  npm pack --silent @ip-location-db/geo-whois-asn-country-mmdb@$(GEO_VERSION) >/dev/null && \
	  tar -xzf ip-location-db-geo-whois-asn-country-mmdb-$(GEO_VERSION).tgz package/geo-whois-asn-country.mmdb && \
	  sum=$$(sha256sum package/geo-whois-asn-country.mmdb | cut -d' ' -f1) && \
	  if [ "$$sum" != "$(GEO_SHA256)" ]; then \
	    echo "country database checksum mismatch: got $$sum, want $(GEO_SHA256) (GEO_SHA256 in the Makefile)" >&2; exit 1; \
	  fi && \
	  mv package/geo-whois-asn-country.mmdb "$@.part" && mv "$@.part" "$@"
	@echo "country database ready: $@"

uadata: $(UADATA_BOTS) $(UADATA_HUMANS)

# $(call npm-file,package,version,path in the tarball,sha256,target): fetch
# one file of an npm package, refuse it (and cache nothing) when its
# checksum differs, and write it under a temp name first so an interrupted
# fetch never leaves a truncated file behind.
define npm-file
	@echo "fetching $(1)@$(2) into $(dir $(5)) (once)"
	@mkdir -p "$(dir $(5))"
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && cd "$$tmp" && \
	  npm pack --silent $(1)@$(2) >/dev/null && \
	  tar -xzf $(1)-$(2).tgz $(3) && \
	  sum=$$(sha256sum $(3) | cut -d' ' -f1) && \
	  if [ "$$sum" != "$(4)" ]; then \
	    echo "$(1)@$(2): checksum mismatch: got $$sum, want $(4) (the Makefile's UADATA_*_SHA256)" >&2; exit 1; \
	  fi && \
	  mv $(3) "$(5).part" && mv "$(5).part" "$(5)"
endef

$(UADATA_BOTS): | npm
	$(call npm-file,crawler-user-agents,$(UADATA_BOTS_VERSION),package/crawler-user-agents.json,$(UADATA_BOTS_SHA256),$@)

$(UADATA_HUMANS): | npm
	$(call npm-file,user-agents,$(UADATA_HUMANS_VERSION),package/dist/user-agents.json,$(UADATA_HUMANS_SHA256),$@)

# The user-agent rules' recall and false-positive rate per data set (CI
# prints it after the tests).
.PHONY: ua-eval
ua-eval: uadata build
	./bin/viewcount ua-eval

clean:
	rm -rf bin

# The fault-injection suite (issue 9): `viewcount serve` as a child process
# under pixel and beacon load, faults injected on a seeded schedule
# (FAULTS_SEED=N repeats a run, FAULTS_ONLY=a,b picks scenarios), and after
# each: acknowledged ids = valid ids in views_raw, rollups = a recount. The
# full-disk scenario mounts a tmpfs, so it needs root (skipped otherwise).
# `soak` is the long variant: 20 kills, a 2-minute store outage, longer floods.
.PHONY: faults soak
FAULTS_SEED ?=
FAULTS_ONLY ?=
FAULTS_ENV = VIEWCOUNT_FAULTS_SEED=$(FAULTS_SEED) VIEWCOUNT_FAULTS_ONLY=$(FAULTS_ONLY)

faults: chdb
	$(GO) test $(GOFLAGS) -tags faults -count=1 -run TestFaultHook ./sql/store/
	$(FAULTS_ENV) VIEWCOUNT_FAULTS=short $(GO) test $(GOFLAGS) -tags faults -count=1 -v -timeout 20m ./cmd/viewcount/faults/

soak: chdb
	$(FAULTS_ENV) VIEWCOUNT_FAULTS=soak $(GO) test $(GOFLAGS) -tags faults -count=1 -v -timeout 90m ./cmd/viewcount/faults/

# The stats API on a generated 10M-event history (issue 10): p50/p99 of
# every stats call over 30 days. The history is generated once (a few
# minutes) and kept under $(CACHE_DIR)/stats-bench, keyed by the
# generator's version and the schema.
.PHONY: bench-stats
bench-stats: chdb
	VIEWCOUNT_STATS_EVENTS=10000000 $(GO) test -run '^$$' -bench BenchmarkStats -benchtime 200x -timeout 60m ./api/stats/

# uPlot (MIT), the dashboard's chart library, vendored into the binary from
# the npm registry at a pinned version. `make uplot` fetches the pinned
# package again and checks it; to update, set both variables to the new
# version and the sha256 of its npm tarball (`npm pack uplot@V; sha256sum`).
UPLOT_VERSION := 1.6.32
UPLOT_SHA256  := 4b8a8191e425658e3ea8c8c1314b0fc679c861ee3a1af2b20c7b16ba50b5133d
UPLOT_DIR     := api/dashboard/assets/vendor/uplot

.PHONY: uplot
uplot:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && cd "$$tmp" && \
	  npm pack --silent uplot@$(UPLOT_VERSION) >/dev/null && \
	  echo "$(UPLOT_SHA256)  uplot-$(UPLOT_VERSION).tgz" | sha256sum -c --quiet && \
	  tar -xzf uplot-$(UPLOT_VERSION).tgz package/LICENSE package/dist/uPlot.iife.min.js package/dist/uPlot.min.css && \
	  mkdir -p "$(CURDIR)/$(UPLOT_DIR)" && \
	  cp package/dist/uPlot.iife.min.js package/dist/uPlot.min.css package/LICENSE "$(CURDIR)/$(UPLOT_DIR)/" && \
	  printf 'uplot %s\nfrom the npm registry: npm pack uplot@%s (tarball sha256 %s)\nfiles: dist/uPlot.iife.min.js, dist/uPlot.min.css, LICENSE (MIT)\nupdate: set UPLOT_VERSION and UPLOT_SHA256 in the Makefile, then make uplot\n' \
	    $(UPLOT_VERSION) $(UPLOT_VERSION) $(UPLOT_SHA256) > "$(CURDIR)/$(UPLOT_DIR)/VERSION"
	@echo "uplot $(UPLOT_VERSION) vendored into $(UPLOT_DIR)"

# The README's picture of the dashboard (docs/dashboard.png): a generated
# history in the real embedded stack, drawn by headless Chromium.
.PHONY: screenshot
screenshot: chdb
	$(GO) test $(GOFLAGS) -count=1 -run TestDashboardScreenshot ./cmd/viewcount/ -args -screenshot $(CURDIR)/docs/dashboard.png

# The official ClickHouse JavaScript client, which TestJSClient runs against
# --sql-listen. Pinned and checked like the other npm downloads; the test
# fetches it the same way when `make` did not. To update: set both, run
# `make jsclient`, and put the sha256 it reports (of the npm tarball) here
# and in cmd/viewcount/jsclient_test.go.
JSCLIENT_VERSION := 1.23.1
JSCLIENT_SHA256  := b6ff9583e6ef0aa0c025916343e7727a5499de8b2d3dcd03e9da901e1bbadba9
JSCLIENT_DIR     := $(CACHE_DIR)/jsclient/$(JSCLIENT_VERSION)/package

.PHONY: jsclient
jsclient: $(JSCLIENT_DIR)/package.json

$(JSCLIENT_DIR)/package.json: | npm
	@echo "fetching @clickhouse/client@$(JSCLIENT_VERSION) into $(JSCLIENT_DIR) (once)"
	@mkdir -p "$(dir $(JSCLIENT_DIR))"
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && cd "$$tmp" && \
	  npm pack --silent @clickhouse/client@$(JSCLIENT_VERSION) >/dev/null && \
	  sum=$$(sha256sum clickhouse-client-$(JSCLIENT_VERSION).tgz | cut -d' ' -f1) && \
	  if [ "$$sum" != "$(JSCLIENT_SHA256)" ]; then \
	    echo "@clickhouse/client@$(JSCLIENT_VERSION): checksum mismatch: got $$sum, want $(JSCLIENT_SHA256) (JSCLIENT_SHA256)" >&2; exit 1; \
	  fi && \
	  tar -xzf clickhouse-client-$(JSCLIENT_VERSION).tgz && rm -rf "$(JSCLIENT_DIR)" && mv package "$(JSCLIENT_DIR)"

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

# The default AS-number data (ingest/asn): the npm package
# @ip-location-db/asn (RouteViews, RIR and DB-IP data, CC BY 4.0), pinned
# to a version, its two CSV files checked against these checksums.
# ASN_VERSION must match asn.Version. To update: change all three, run
# `make asn` once, and put the sha256s it reports here.
ASN_VERSION     := 2.3.2026061719
ASN_IPV4_SHA256 := 43b77baaa819c8cdb39456dc19d3d7987608379851036597e6a0ef3711086c79
ASN_IPV6_SHA256 := c91289d4d5dba149fb5f0c12ff3a6db3ad2d1910250034f56f187f4d32f1d337
VIEWCOUNT_ASN_DB ?= $(CACHE_DIR)/asn/$(ASN_VERSION)
export VIEWCOUNT_ASN_DB
ASN_IPV4 := $(VIEWCOUNT_ASN_DB)/asn-ipv4-num.csv
ASN_IPV6 := $(VIEWCOUNT_ASN_DB)/asn-ipv6.csv

# The user-agent evaluation data (validate/uaeval, `vcdev ua-eval`):
# bot user agents from crawler-user-agents (MIT) and real-traffic browser
# user agents with their traffic weights from user-agents (BSD-2-Clause),
# both npm packages pinned to a version, the JSON file of each checked
# against its checksum. The versions must match uaeval's constants. To
# update: change both, run `make uadata`, put the sha256 it reports here.
UADATA_BOTS_VERSION   := 1.60.0
UADATA_BOTS_SHA256    := c36c67f2527f1a5340858d540c732ebbc3ec866cfc0c5717de82b22a1f8dc537
UADATA_HUMANS_VERSION := 2.1.198
UADATA_HUMANS_SHA256  := 5432ce503c8d18fb6ac2dd668d019df3fdd94843a9472fda2525507f988e0022
# Two more, both evaluation-only (nothing in validate reads them): bots and
# legacy browsers filed by useragentstring.com (random-useragent, MIT), and
# the 100 user agents most seen by microlink.io (top-user-agents, MIT).
UADATA_RANDOM_VERSION := 0.5.0
UADATA_RANDOM_SHA256  := d060a3361e1778d7b9e30d126a07d5f2974bef1b97b64713dfc8f8527a1b486f
UADATA_TOP_VERSION    := 2.1.138
UADATA_TOP_SHA256     := 93e2a7b28c2e3ada4eacc02aeaf900aa9aa52f3d28da50cd03d63012f7f704ac
VIEWCOUNT_UADATA ?= $(CACHE_DIR)/uadata
export VIEWCOUNT_UADATA
# And Debian's uap-core package (ua-parser's regexes and test fixtures,
# Apache-2.0): its tests/test_device.yaml, 16,111 real devices' user agents
# (smart TVs, consoles, e-readers, in-app browsers among them) and 68
# crawlers, each filed by ua-parser's maintainers. Fetched with apt-get
# download (no install), the file checked against its checksum.
UADATA_UAP_VERSION := 0.16.0
UADATA_UAP_DEB     := 1:0.16.0-1
UADATA_UAP_SHA256  := 4180b5fe9d19d7e9e3090cd475612b90398cb9ecf6fe35859f8b6b3f33e0beae
UADATA_BOTS   := $(VIEWCOUNT_UADATA)/crawler-user-agents-$(UADATA_BOTS_VERSION).json
UADATA_HUMANS := $(VIEWCOUNT_UADATA)/user-agents-$(UADATA_HUMANS_VERSION).json
UADATA_RANDOM := $(VIEWCOUNT_UADATA)/random-useragent-$(UADATA_RANDOM_VERSION).json
UADATA_TOP    := $(VIEWCOUNT_UADATA)/top-user-agents-$(UADATA_TOP_VERSION).json
UADATA_UAP    := $(VIEWCOUNT_UADATA)/uap-core-$(UADATA_UAP_VERSION)-test_device.yaml

GO       ?= go
GOFLAGS  ?=
PKGS     := ./...

.PHONY: run build test test-unit test-system check bench chdb geo asn uadata npm fmt vet staticcheck clean

run: chdb geo asn build
	./bin/viewcount serve

# bin/viewcount is the production binary, the only one the image ships
# (Dockerfile); bin/vcdev holds the development tools (loadgen, ua-eval).
build:
	$(GO) build $(GOFLAGS) -o bin/viewcount ./cmd/viewcount
	$(GO) build $(GOFLAGS) -o bin/vcdev ./cmd/vcdev

# Two lanes (docs/development.md, "Tests"). The unit lane: every package
# under -race -short. The system lane, without -race: what -short skips, that
# is the system tests under test/ (end to end, browsers, compose, traffic
# mixes; test/README.md), those that stay in cmd/viewcount/app because they
# reach into a process's internals (the NATS cluster with kills among them),
# and the few long tests of other packages named in LONG, run where they live.
test: test-unit test-system

test-unit: chdb geo asn uadata jsclient
	$(GO) test $(GOFLAGS) -race -short -count=1 -timeout 20m $(PKGS)

SYSTEM_PKGS := ./test/... ./cmd/viewcount/app/
LONG := TestRolesImportNoRole|TestEngineMemory|TestMergeThreadsNice|TestStoreWorkAtNice|TestWindowProbeChromium|TestNumbersAgree|TestUAEvalPinnedData|TestChDBNoLibrary|TestAnalystCanariesGenerated|TestBuiltinTokensSpareDevices|TestCountMinOverestimate|TestReaderSurvivesConsumerNode|TestClusterReplicas|TestExternalServerStallAndRestart
LONG_PKGS = $(sort $(patsubst %/,%,$(dir $(shell grep -lrwE 'func ($(LONG))' --include='*_test.go' .))))

test-system: chdb geo asn uadata jsclient
	$(GO) test $(GOFLAGS) -count=1 -timeout 20m $(SYSTEM_PKGS)
	$(GO) test $(GOFLAGS) -count=1 -timeout 20m -run '^($(LONG))$$' $(LONG_PKGS)

# What CI runs: formatting, vet, staticcheck, then the tests.
check: fmt vet staticcheck test

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

# staticcheck is pinned in go.mod (a tool directive), so every machine runs
# the same version; to update: go get -tool honnef.co/go/tools/cmd/staticcheck@vX.
staticcheck:
	$(GO) tool staticcheck $(PKGS)

bench: chdb geo asn
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

asn: $(ASN_IPV4) $(ASN_IPV6)

# The AS-number data (58 MB unpacked, 18 MB packed) from the npm package
# @ip-location-db/asn: both files come from one fetch (a grouped target,
# GNU make 4.3+); a file whose checksum differs is refused and nothing is
# cached.
$(ASN_IPV4) $(ASN_IPV6) &: | npm
	@echo "fetching the AS-number data $(ASN_VERSION) into $(VIEWCOUNT_ASN_DB) (once)"
	@mkdir -p "$(VIEWCOUNT_ASN_DB)"
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && cd "$$tmp" && \
	  npm pack --silent @ip-location-db/asn@$(ASN_VERSION) >/dev/null && \
	  tar -xzf ip-location-db-asn-$(ASN_VERSION).tgz package/asn-ipv4-num.csv package/asn-ipv6.csv && \
	  for f in asn-ipv4-num.csv:$(ASN_IPV4_SHA256) asn-ipv6.csv:$(ASN_IPV6_SHA256); do \
	    sum=$$(sha256sum package/$${f%%:*} | cut -d' ' -f1); \
	    if [ "$$sum" != "$${f#*:}" ]; then \
	      echo "AS-number data $${f%%:*}: checksum mismatch: got $$sum, want $${f#*:} (ASN_IPV*_SHA256 in the Makefile)" >&2; exit 1; \
	    fi; \
	  done && \
	  mv package/asn-ipv6.csv "$(ASN_IPV6).part" && mv "$(ASN_IPV6).part" "$(ASN_IPV6)" && \
	  mv package/asn-ipv4-num.csv "$(ASN_IPV4).part" && mv "$(ASN_IPV4).part" "$(ASN_IPV4)"
	@echo "AS-number data ready: $(VIEWCOUNT_ASN_DB)"

uadata: $(UADATA_BOTS) $(UADATA_HUMANS) $(UADATA_RANDOM) $(UADATA_TOP) $(UADATA_UAP)

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

$(UADATA_RANDOM): | npm
	$(call npm-file,random-useragent,$(UADATA_RANDOM_VERSION),package/useragent-data.json,$(UADATA_RANDOM_SHA256),$@)

$(UADATA_TOP): | npm
	$(call npm-file,top-user-agents,$(UADATA_TOP_VERSION),package/src/index.json,$(UADATA_TOP_SHA256),$@)

# apt-get download needs the package lists; they are fetched once when the
# pinned version is not in them.
$(UADATA_UAP):
	@echo "fetching Debian's uap-core $(UADATA_UAP_DEB) into $(dir $@) (once)"
	@command -v apt-get >/dev/null 2>&1 || { echo "apt-get is needed once to fetch uap-core's fixtures (a Debian package); or put tests/test_device.yaml of uap-core $(UADATA_UAP_VERSION) at $@"; exit 1; }
	@mkdir -p "$(dir $@)"
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && cd "$$tmp" && \
	  { apt-get download -qq uap-core=$(UADATA_UAP_DEB) >/dev/null 2>&1 || \
	    { apt-get update -qq >/dev/null && apt-get download -qq uap-core=$(UADATA_UAP_DEB) >/dev/null; }; } && \
	  dpkg-deb -x uap-core_*.deb x && \
	  f=x/usr/share/uap-core/tests/test_device.yaml && \
	  sum=$$(sha256sum $$f | cut -d' ' -f1) && \
	  if [ "$$sum" != "$(UADATA_UAP_SHA256)" ]; then \
	    echo "uap-core $(UADATA_UAP_DEB): checksum mismatch: got $$sum, want $(UADATA_UAP_SHA256) (UADATA_UAP_SHA256)" >&2; exit 1; \
	  fi && \
	  mv $$f "$@.part" && mv "$@.part" "$@"

# The browser model's in-app list (validate/judge/lists/inapp.txt) is a vetted
# extract of inapp-spy's regexps, embedded at build time. This fetches the
# pinned version, checks its checksum and prints its regexps to compare with
# the extract; to update, change both lines and the file's header.
INAPP_VERSION := 5.0.10
INAPP_SHA256  := 17fb8e2211005dbc7df1a2fe25377be6796b21bfa2b2eec460f691505c1e024c
.PHONY: inapplist
inapplist: | npm
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && cd "$$tmp" && \
	  npm pack --silent inapp-spy@$(INAPP_VERSION) >/dev/null && \
	  tar -xzf inapp-spy-$(INAPP_VERSION).tgz package/dist/index.js && \
	  sum=$$(sha256sum package/dist/index.js | cut -d' ' -f1) && \
	  if [ "$$sum" != "$(INAPP_SHA256)" ]; then \
	    echo "inapp-spy@$(INAPP_VERSION): checksum mismatch: got $$sum, want $(INAPP_SHA256)" >&2; exit 1; \
	  fi && \
	  echo "inapp-spy@$(INAPP_VERSION) (sha256 ok): appNameRegExps, then inAppRegExps:" && \
	  grep -E '^ +regex: /' package/dist/index.js && \
	  sed -n '/^var inAppRegExps/,/^];/p' package/dist/index.js | grep -E '^ +"'

# The user-agent rules' recall and false-positive rate per data set (CI
# prints it after the tests).
.PHONY: ua-eval
ua-eval: uadata build
	./bin/vcdev ua-eval

clean:
	rm -rf bin

# docs/configuration.md is generated from the flag set (cmd/viewcount/app/config.go);
# TestConfigurationDocs fails when the committed page is stale. Phony: docs is
# also a directory.
.PHONY: docs
docs:
	$(GO) run ./cmd/viewcount docs flags > docs/configuration.md.part || { rm -f docs/configuration.md.part; exit 1; }
	mv docs/configuration.md.part docs/configuration.md

# The analyst checks' property tests, fuzzed for a bounded number of runs
# (CI runs it): any text through the checks (FuzzCheck), and every
# accepted query run on the real engine with canary files present
# (FuzzAnalystCanaries: no canary read, no file written, no session
# changed). The budgets are counts (-fuzztime Nx): about 20 s each on a
# quiet box, 63-70 s in a CI run beside the other lanes. A duration races
# Go 1.26's fuzzing coordinator at its deadline on a loaded machine
# (go.dev/issue/75804, "context deadline exceeded" with no crasher; it
# failed CI once); a count has no deadline. FUZZTIME=45s (or 1000x) sets
# both.
FUZZ_CHECK ?= 200000x
FUZZ_CANARIES ?= 30000x
.PHONY: fuzz
fuzz: chdb
	$(GO) test $(GOFLAGS) -run '^$$' -fuzz '^FuzzCheck$$' -fuzztime $(or $(FUZZTIME),$(FUZZ_CHECK)) ./sql/analyst/
	$(GO) test $(GOFLAGS) -run '^$$' -fuzz '^FuzzAnalystCanaries$$' -fuzztime $(or $(FUZZTIME),$(FUZZ_CANARIES)) ./sql/store/

# The fault-injection suite (test/faults): `viewcount serve` as a child process
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
	$(FAULTS_ENV) VIEWCOUNT_FAULTS=short $(GO) test $(GOFLAGS) -tags faults -count=1 -v -timeout 20m ./test/faults/

soak: chdb
	$(FAULTS_ENV) VIEWCOUNT_FAULTS=soak $(GO) test $(GOFLAGS) -tags faults -count=1 -v -timeout 90m ./test/faults/

# Alternating rounds of a base commit's server and this tree's, one fresh
# `serve` each per round, the load from this tree's vcdev for both:
# $(call rounds,ROUNDS,LOADGEN FLAGS). Needs curl.
define rounds
	@test -n "$(BASE)" || { echo "set BASE=<commit> to compare with"; exit 2; }
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	git worktree add -q "$$tmp/base" $(BASE) && \
	(cd "$$tmp/base" && $(GO) build -o "$$tmp/vc-base" ./cmd/viewcount) && \
	git worktree remove --force "$$tmp/base" && \
	$(GO) build -o "$$tmp/vc-now" ./cmd/viewcount && \
	$(GO) build -o "$$tmp/vcdev" ./cmd/vcdev && \
	bash cmd/vcdev/loadgen/rounds.sh $(1) "$$tmp/vcdev" "$(2)" "$$tmp/vc-base" "$$tmp/vc-now"
endef

# The pixel against bare Gin, closed loop: make pixel-rounds BASE=<commit>
# [ROUNDS=5]; each round prints its "throughput N×".
ROUNDS ?= 5
.PHONY: pixel-rounds
pixel-rounds: chdb
	$(call rounds,$(ROUNDS),--duration 10s --baseline --lag=false)

# The pixel in open loop: make openloop-rounds BASE=<commit> [OPEN_ROUNDS=2]
# [RATE=20000] [DURATION=180s]; each round prints its latency (from the
# scheduled send) and the server's RSS at start, end and peak.
OPEN_ROUNDS ?= 2
RATE ?= 20000
DURATION ?= 180s
.PHONY: openloop-rounds
openloop-rounds: chdb
	$(call rounds,$(OPEN_ROUNDS),--rate $(RATE) --duration $(DURATION) --lag=false)

# The stats API on a generated 10M-event history: p50/p99 of
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

# The dashboard's world map, vendored from the npm registry at pinned
# versions like uPlot and loaded only when its Map tab is opened:
# world-atlas's countries-110m.json (ISC; Natural Earth's public-domain
# 1:110m countries as TopoJSON, ids ISO 3166-1 numeric) and
# i18n-iso-countries's codes.json (MIT; numeric to alpha-2, the codes the
# country dimension stores). `make worldmap` fetches both again and checks
# them; to update, set the versions and the sha256 of their tarballs.
WORLDATLAS_VERSION := 2.0.2
WORLDATLAS_SHA256  := 032e7765f2ce00edaeafec23ff22bc3b77e42987c257da944cc585b452c05b97
ISOCODES_VERSION   := 7.14.0
ISOCODES_SHA256    := bb418ebfb965789fcfbcce7dee59888d901ef64b03601da78b2e224cd6f5825c
WORLDMAP_DIR       := api/dashboard/assets/vendor/world

.PHONY: worldmap
worldmap:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && cd "$$tmp" && \
	  npm pack --silent world-atlas@$(WORLDATLAS_VERSION) i18n-iso-countries@$(ISOCODES_VERSION) >/dev/null && \
	  echo "$(WORLDATLAS_SHA256)  world-atlas-$(WORLDATLAS_VERSION).tgz" | sha256sum -c --quiet && \
	  echo "$(ISOCODES_SHA256)  i18n-iso-countries-$(ISOCODES_VERSION).tgz" | sha256sum -c --quiet && \
	  mkdir -p wa iso "$(CURDIR)/$(WORLDMAP_DIR)" && \
	  tar -xzf world-atlas-$(WORLDATLAS_VERSION).tgz -C wa package/countries-110m.json package/LICENSE && \
	  tar -xzf i18n-iso-countries-$(ISOCODES_VERSION).tgz -C iso package/codes.json package/LICENSE && \
	  cp wa/package/countries-110m.json "$(CURDIR)/$(WORLDMAP_DIR)/" && \
	  cp wa/package/LICENSE "$(CURDIR)/$(WORLDMAP_DIR)/LICENSE-world-atlas" && \
	  cp iso/package/codes.json "$(CURDIR)/$(WORLDMAP_DIR)/" && \
	  cp iso/package/LICENSE "$(CURDIR)/$(WORLDMAP_DIR)/LICENSE-i18n-iso-countries" && \
	  printf 'world-atlas %s: countries-110m.json, LICENSE (ISC); npm pack world-atlas@%s (tarball sha256 %s)\ni18n-iso-countries %s: codes.json, LICENSE (MIT); npm pack i18n-iso-countries@%s (tarball sha256 %s)\nupdate: set WORLDATLAS_* and ISOCODES_* in the Makefile, then make worldmap\n' \
	    $(WORLDATLAS_VERSION) $(WORLDATLAS_VERSION) $(WORLDATLAS_SHA256) $(ISOCODES_VERSION) $(ISOCODES_VERSION) $(ISOCODES_SHA256) > "$(CURDIR)/$(WORLDMAP_DIR)/VERSION"
	@echo "world map vendored into $(WORLDMAP_DIR)"

# The README's picture of the dashboard (docs/dashboard.png): a generated
# history in the real embedded stack, drawn by headless Chromium.
.PHONY: screenshot
screenshot: chdb
	$(GO) test $(GOFLAGS) -count=1 -run TestDashboardScreenshot ./test/browser/ -args -screenshot $(CURDIR)/docs/dashboard.png

# The official ClickHouse JavaScript client, which TestJSClient runs against
# --sql-listen. Pinned and checked like the other npm downloads; the test
# fetches it the same way when `make` did not. To update: set both, run
# `make jsclient`, and put the sha256 it reports (of the npm tarball) here
# and in test/e2e/jsclient_test.go.
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

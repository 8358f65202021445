# syntax=docker/dockerfile:1
# The viewcount binary for server mode: each role (ingest, validate, api)
# against a NATS cluster (NATS_URL) and a ClickHouse server
# (CLICKHOUSE_DSN), as docker-compose.yml runs them. The embedded store
# (chDB, `viewcount serve` without CLICKHOUSE_DSN) is not in the image:
# libchdb.so is loaded at run time only when asked for, and is ~570 MB.
# Only cmd/viewcount is built: the development tools (cmd/vcdev: loadgen,
# ua-eval) are not in the image.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG VERSION=dev
# CGO off: chDB is loaded with purego, so the binary is static and runs on
# an image with no C library.
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/viewcount ./cmd/viewcount \
 && mkdir -p /out/data

# The country and AS-number data ingest looks up, fetched as `make geo asn`
# does it (pinned npm packages, checked against the Makefile's sha256
# sums) and moved to fixed paths.
FROM node:22-bookworm AS data
WORKDIR /src
COPY Makefile ./
RUN make geo asn XDG_CACHE_HOME=/tmp/cache \
 && mkdir -p /out/asn \
 && mv /tmp/cache/viewcount/geo/*/geo-whois-asn-country.mmdb /out/ \
 && mv /tmp/cache/viewcount/asn/*/asn-ipv4-num.csv /tmp/cache/viewcount/asn/*/asn-ipv6.csv /out/asn/

# distroless: CA certificates and a non-root user, no shell and no package
# manager (the health check is the binary's own `viewcount health`).
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/viewcount /viewcount
COPY --from=data /out /usr/share/viewcount
# The data dir holds the admin token when none is given; a role on a
# cluster and a server keeps nothing else there.
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
ENV VIEWCOUNT_DATA=/data VIEWCOUNT_LISTEN=:8080 \
    VIEWCOUNT_COUNTRY_DB=/usr/share/viewcount/geo-whois-asn-country.mmdb \
    VIEWCOUNT_ASN_DB=/usr/share/viewcount/asn
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["/viewcount", "health"]
ENTRYPOINT ["/viewcount"]
CMD ["--help"]

#!/usr/bin/env bash
# pixel-rounds.sh ROUNDS VCDEV BINARY... : alternating rounds of the pixel
# against bare Gin, one fresh `serve` of each viewcount BINARY per round, so
# binaries built from two commits compare on a noisy machine. Prints each
# round's ratio ("throughput N×") and the two request lines (bare Gin, then
# the server). The load comes from one `VCDEV loadgen` for every binary, so
# only the server differs between them. See docs/benchmarks/method.md, "Medians, rounds and ratios".
set -euo pipefail
rounds=$1; gen=$2; shift 2
for r in $(seq 1 "$rounds"); do
  for b in "$@"; do
    d=$(mktemp -d)
    "$b" serve --listen 127.0.0.1:8091 --trusted-proxies 127.0.0.1/32 --admin-token tok --data "$d" >"$d/serve.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 60); do curl -sf http://127.0.0.1:8091/readyz >/dev/null && break; sleep 0.5; done
    out=$("$gen" loadgen --server http://127.0.0.1:8091 --admin-token tok --site load.example --duration 10s --baseline --lag=false 2>&1)
    echo "round $r $b $(grep -o 'throughput [0-9.]*×' <<<"$out") | $(grep '^requests' <<<"$out" | tr '\n' ' ')"
    kill "$pid"; wait "$pid" 2>/dev/null || true; rm -rf "$d"
  done
done

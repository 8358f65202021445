#!/usr/bin/env bash
# rounds.sh ROUNDS VCDEV "LOADGEN FLAGS" BINARY... : alternating rounds of
# one `VCDEV loadgen LOADGEN FLAGS` run against a fresh `serve` of each
# viewcount BINARY (on its defaults, the memory budget included), so
# binaries built from two commits compare on a noisy machine. The load
# comes from the one VCDEV for every binary, so only the server differs.
# Prints per round and binary the ratio to bare Gin ("throughput N×", with
# --baseline), the request, latency and server memory lines. Used by
# `make pixel-rounds` and `make openloop-rounds`; see
# docs/benchmarks/method.md, "Medians, rounds and ratios".
set -euo pipefail
rounds=$1; gen=$2; flags=$3; shift 3
for r in $(seq 1 "$rounds"); do
  for b in "$@"; do
    d=$(mktemp -d)
    "$b" serve --listen 127.0.0.1:8091 --trusted-proxies 127.0.0.1/32 --admin-token tok --data "$d" >"$d/serve.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 60); do curl -sf http://127.0.0.1:8091/readyz >/dev/null && break; sleep 0.5; done
    # shellcheck disable=SC2086 # flags are words
    out=$("$gen" loadgen --server http://127.0.0.1:8091 --admin-token tok --site load.example $flags --quiet 2>&1)
    echo "round $r $b $(grep -o 'throughput [0-9.]*×' <<<"$out" || true) | $(grep -E '^(requests|latency|server mem)' <<<"$out" | tr -s ' ' | tr '\n' '|')"
    kill "$pid"; wait "$pid" 2>/dev/null || true; rm -rf "$d"
  done
done

#!/usr/bin/env bash
# openloop-rounds.sh ROUNDS RATE DURATION VCDEV BINARY... : alternating
# open-loop pixel runs at RATE requests/s for DURATION, one fresh `serve`
# of each viewcount BINARY per round (its defaults: the memory budget
# included), so two commits' tails and memory compare on a noisy machine.
# Prints each round's latency line and the server's memory line. See
# docs/benchmarks/method.md, "Medians, rounds and ratios".
set -euo pipefail
rounds=$1; rate=$2; duration=$3; gen=$4; shift 4
for r in $(seq 1 "$rounds"); do
  for b in "$@"; do
    d=$(mktemp -d)
    "$b" serve --listen 127.0.0.1:8091 --trusted-proxies 127.0.0.1/32 --admin-token tok --data "$d" >"$d/serve.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 60); do curl -sf http://127.0.0.1:8091/readyz >/dev/null && break; sleep 0.5; done
    out=$("$gen" loadgen --server http://127.0.0.1:8091 --admin-token tok --site load.example --rate "$rate" --duration "$duration" --lag=false --quiet 2>&1)
    echo "round $r $b | $(grep -E '^(requests|latency|server mem)' <<<"$out" | tr -s ' ' | tr '\n' '|')"
    kill "$pid"; wait "$pid" 2>/dev/null || true; rm -rf "$d"
  done
done

#!/usr/bin/env bash
# bench/callgrind.sh - user-space instructions per pipelined plaintext request of `twelve serve`,
# counted by callgrind (deterministic, so small changes show where timings on a noisy 2-core
# VM cannot). The server runs under valgrind from an x86-64-v3 build: valgrind does not decode
# AVX-512, so not target-cpu=native, but AVX2 takes the SIMD paths the native build takes, not
# the SSE2 ones of a portable build. twelve bench (native build) sends N1 and then N2 requests
# 16 deep on 16 connections; the difference of the two totals over N2 - N1 leaves out start-up
# and shutdown. The request carries the header set of bench/wrk-rounds.sh.
#
# Usage: bench/callgrind.sh [N1 N2]     (default 16000 176000)
# Env:   PORT=8095  KEEP=FILE (keep the N2 run's callgrind.out for callgrind_annotate)
# Needs valgrind and cargo. Stops what it starts by PID.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
N1=${1:-16000}; N2=${2:-176000}; PORT=${PORT:-8095}
(cd "$ROOT" && CARGO_TARGET_DIR="$ROOT/target/callgrind" RUSTFLAGS="-C target-cpu=x86-64-v3" \
  cargo build -q --profile bench-bin)
(cd "$ROOT" && RUSTFLAGS="-C target-cpu=native" cargo build -q --profile bench-bin)
SERVER="$ROOT/target/callgrind/bench-bin/twelve"
# The request of bench/wrk-rounds.sh (TechEmpower's wrk header set), so the parse weighs what it
# weighs in the serve.sh plaintext runs.
ACCEPT="Accept: application/json,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7"
CLIENT="$ROOT/target/bench-bin/twelve"
total() {
  local n=$1 out
  out=$(mktemp)
  valgrind --tool=callgrind --callgrind-out-file="$out" \
    "$SERVER" serve --listen "127.0.0.1:$PORT" --cpus 0 --workers 1 >/dev/null 2>&1 &
  local vp=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/plaintext" >/dev/null && break; sleep 0.2; done
  timeout 300 "$CLIENT" bench "http://127.0.0.1:$PORT/plaintext" --cpus 1 -t1 -c16 -p16 -n "$n" \
    -H "Host: localhost" -H "$ACCEPT" \
    --warmup 0 >/dev/null 2>&1
  kill -TERM "$vp"; wait "$vp" || true
  awk '/^summary:|^totals:/{print $2; exit}' "$out"
  if [ -n "${KEEP:-}" ] && [ "$n" = "$N2" ]; then cp "$out" "$KEEP"; fi
  rm -f "$out"
}
a=$(total "$N1"); b=$(total "$N2")
echo "server instructions: $a for $N1 requests, $b for $N2"
awk -v a="$a" -v b="$b" -v n=$((N2 - N1)) 'BEGIN{printf "%.1f instructions per request\n", (b - a) / n}'

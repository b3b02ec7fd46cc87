#!/usr/bin/env bash
# bench/serve-ab.sh - one `twelve serve` build against another: both servers pinned to CPU 0
# with one worker, capped together at CAP% of that core (only one is loaded at a time), measured
# by `twelve compare` in interleaved rounds (A B A B ...) with the client on CPU 1. What a change
# to the engine did to the requests a capped core serves.
#
# Usage: bench/serve-ab.sh A_BIN B_BIN [OUTDIR]   (default bench/runs/<date>-serve-ab)
# Env:   ROUNDS=7  DURATION=5s  WARMUP=1s  CONNS=256  PIPELINE=1  TEST=json  IO=epoll|uring
#        TLS=0|1 (https with a fresh CA from bench/tls-pki.sh)  CAP=50 (percent; 0: uncapped)
# Writes OUTDIR/README.md (the setup), compare.txt and compare.json (every round and the B/A
# medians), and raw/ (the servers' logs). Needs root for the cap. Stops what it started, by PID.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
A=${1:?usage: serve-ab.sh A_BIN B_BIN [OUTDIR]}; B=${2:?usage: serve-ab.sh A_BIN B_BIN [OUTDIR]}
OUT=${3:-$ROOT/bench/runs/$(date +%F)-serve-ab}
ROUNDS=${ROUNDS:-7}; DURATION=${DURATION:-5s}; WARMUP=${WARMUP:-1s}; CONNS=${CONNS:-256}
PIPELINE=${PIPELINE:-1}; TEST=${TEST:-json}; IO=${IO:-epoll}; TLS=${TLS:-0}; CAP=${CAP:-50}
A_PORT=8090; B_PORT=8091
mkdir -p "$OUT/raw"
PIDS=()
cleanup() {
  "$ROOT/bench/cpu-quota.sh" off "$A_PORT" "$B_PORT" >/dev/null 2>&1 || true
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
  [ -z "${PKI:-}" ] || rm -rf "$PKI"
}
trap cleanup EXIT
ulimit -n "$(ulimit -Hn)"

scheme=http; tls_serve=(); tls_bench=()
if [ "$TLS" = 1 ]; then
  PKI=$(mktemp -d)
  "$ROOT/bench/tls-pki.sh" "$PKI"
  scheme=https
  tls_serve=(--tls-cert "$PKI/chain.pem" --tls-key "$PKI/key.pem")
  tls_bench=(--cacert "$PKI/ca.pem")
fi
start() { # BIN PORT NAME
  taskset -c 0 "$1" serve --listen "127.0.0.1:$2" --cpus 0 --io "$IO" "${tls_serve[@]}" \
    > "$OUT/raw/$3.log" 2>&1 &
  PIDS+=($!)
}
start "$A" "$A_PORT" a
start "$B" "$B_PORT" b
for p in "$A_PORT" "$B_PORT"; do
  for _ in $(seq 100); do
    curl -sfk -o /dev/null "$scheme://127.0.0.1:$p/$TEST" && break
    sleep 0.1
  done
done
[ "$CAP" = 0 ] || "$ROOT/bench/cpu-quota.sh" "$CAP" "$A_PORT" "$B_PORT" > "$OUT/raw/quota.log"

{
  echo "# twelve serve A against B"
  echo
  echo "- date: $(date -u +%FT%TZ); kernel $(uname -r); $(nproc) CPUs"
  echo "- A: $A ($("$A" --version | head -1))"
  echo "- B: $B ($("$B" --version | head -1))"
  echo "- servers: CPU 0, one worker, --io $IO, $scheme, capped at ${CAP}% of CPU 0 (0: uncapped)"
  echo "- client: B's twelve compare on CPU 1, one thread, -c $CONNS -p $PIPELINE, /$TEST"
  echo "- rounds: $ROUNDS, each A then B, $DURATION after $WARMUP warm-up"
  echo "- command: ROUNDS=$ROUNDS DURATION=$DURATION CONNS=$CONNS PIPELINE=$PIPELINE TEST=$TEST" \
    "IO=$IO TLS=$TLS CAP=$CAP bench/serve-ab.sh A_BIN B_BIN"
} > "$OUT/README.md"

"$B" compare "$scheme://localhost:$A_PORT/$TEST" "$scheme://localhost:$B_PORT/$TEST" \
  --rounds "$ROUNDS" -c "$CONNS" -p "$PIPELINE" -t 1 --cpus 1 -d "$DURATION" --warmup "$WARMUP" \
  "${tls_bench[@]}" --json "$OUT/compare.json" | tee "$OUT/compare.txt"

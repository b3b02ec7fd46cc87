#!/usr/bin/env bash
# bench/compare.sh - twelve serve against one peer with `twelve compare`: the peer (A) and
# twelve (B) are started by compare itself, run interleaved A B A B, and stopped by process
# group; the report gives each figure's median and min-max per side and the B/A ratio round by
# round. Servers pinned to CPU 0 (one worker), twelve bench to CPU 1.
#
# Usage: bench/compare.sh PEER [OUTDIR]   PEER: nginx | may     (default OUTDIR bench/runs/<date>-compare)
# Env:   ROUNDS=5  CONNS=256  DURATION=10s  WARMUP=2s  TEST=json|plaintext
# The peer's port must be free; may_minihttp is a binary built outside the repository, at
# MAY_BIN (default /tmp/bench-target/release/mayhttp; bench/peers/README.md).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PEER=${1:?peer: nginx|may}
OUT=${2:-$ROOT/bench/runs/$(date +%F)-compare}
ROUNDS=${ROUNDS:-5}; CONNS=${CONNS:-256}; DURATION=${DURATION:-10s}; WARMUP=${WARMUP:-2s}
TEST=${TEST:-json}; PORT=8090
mkdir -p "$OUT"
(cd "$ROOT" && RUSTFLAGS="-C target-cpu=native" cargo build -q --profile bench-bin)
BIN="$ROOT/target/bench-bin/twelve"
ulimit -n "$(ulimit -Hn)"

case $PEER in
  nginx) mkdir -p /tmp/bench-nginx
         A="taskset -c 0 nginx -p /tmp/bench-nginx -e /tmp/bench-nginx/error.log -c $ROOT/bench/peers/nginx-tfb.conf"
         A_PORT=8081 ;;
  may)   MAY_BIN=${MAY_BIN:-/tmp/bench-target/release/mayhttp}
         [ -x "$MAY_BIN" ] || { echo "may: no binary at $MAY_BIN (bench/peers/README.md)" >&2; exit 2; }
         A="env PORT=8083 WORKERS=1 taskset -c 0 $MAY_BIN"
         A_PORT=8083 ;;
  *) echo "unknown peer $PEER" >&2; exit 2 ;;
esac
B="taskset -c 0 $BIN serve --listen 127.0.0.1:$PORT --cpus 0"
extra=()
[ "$TEST" = plaintext ] && extra=(-p 16)

"$BIN" compare "$A" "$B" \
  --a-url "http://127.0.0.1:$A_PORT/$TEST" --b-url "http://127.0.0.1:$PORT/$TEST" \
  --rounds "$ROUNDS" -c "$CONNS" -t 1 --cpus 1 -d "$DURATION" --warmup "$WARMUP" "${extra[@]}" \
  -H 'Host: localhost' --json "$OUT/compare-$PEER-$TEST.json" | tee "$OUT/compare-$PEER-$TEST.txt"

#!/usr/bin/env bash
# bench/tools/libreactor-callgrind.sh N -> total instructions of libreactor's worker for N pipelined
# TFB plaintext requests, sent by the workspace's target/bench-bin/twelve as bench/callgrind.sh sends
# them (bench/runs/2026-11-26-libreactor-callgrind says how the libreactor build was made).
# Env: LRBIN (the libreactor binary, listening on 8086), CLIENT (the twelve binary), WORK=/tmp/lr
set -euo pipefail
N=$1; BIN=${LRBIN:-/tmp/peers/libreactor-8086/libreactor}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CLIENT=${CLIENT:-$ROOT/target/bench-bin/twelve}
W=${WORK:-/tmp/lr}
mkdir -p "$W"; rm -f "$W"/cg.out.*
taskset -c 0 valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$W/cg.out.%p" "$BIN" > "$W/lr.log" 2>&1 &
VP=$!
for _ in $(seq 100); do curl -sf http://127.0.0.1:8086/plaintext >/dev/null && break; sleep 0.3; done
ACCEPT="Accept: application/json,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7"
timeout 300 "$CLIENT" bench http://127.0.0.1:8086/plaintext --cpus 1 -t1 -c16 -p16 -n "$N" -H "Host: localhost" -H "$ACCEPT" --warmup 0 > "$W/bench.log" 2>&1 || true
KIDS=$(pgrep -P "$VP" || true)
kill -TERM $KIDS "$VP" 2>/dev/null || true
for p in $KIDS; do while kill -0 "$p" 2>/dev/null; do sleep 0.2; done; done
wait "$VP" 2>/dev/null || true
for f in "$W"/cg.out.*; do echo "$f $(awk '/^summary:|^totals:/{print $2; exit}' "$f")"; done

#!/usr/bin/env bash
# cg.sh N -> total instructions of libreactor's worker for N pipelined TFB plaintext requests
set -euo pipefail
N=$1; BIN=${LRBIN:-/tmp/peers/libreactor-8086/libreactor}
CLIENT=/work/main/target/bench-bin/twelve
rm -f /tmp/lr/cg.out.*
taskset -c 0 valgrind --tool=callgrind --trace-children=yes --callgrind-out-file=/tmp/lr/cg.out.%p "$BIN" > /tmp/lr/lr.log 2>&1 &
VP=$!
for _ in $(seq 100); do curl -sf http://127.0.0.1:8086/plaintext >/dev/null && break; sleep 0.3; done
ACCEPT="Accept: application/json,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7"
timeout 300 "$CLIENT" bench http://127.0.0.1:8086/plaintext --cpus 1 -t1 -c16 -p16 -n "$N" -H "Host: localhost" -H "$ACCEPT" --warmup 0 > /tmp/lr/bench.log 2>&1 || true
KIDS=$(pgrep -P "$VP" || true)
kill -TERM $KIDS "$VP" 2>/dev/null || true
for p in $KIDS; do while kill -0 "$p" 2>/dev/null; do sleep 0.2; done; done
wait "$VP" 2>/dev/null || true
for f in /tmp/lr/cg.out.*; do echo "$f $(awk '/^summary:|^totals:/{print $2; exit}' "$f")"; done

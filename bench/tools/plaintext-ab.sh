#!/usr/bin/env bash
# bench/tools/plaintext-ab.sh - an A/B of two twelve builds against may_minihttp on pipelined plaintext, capped at 50% of
# CPU 0, interleaved (new old may new old may ...), with bench/wrk-rounds.sh
# (bench/runs/2026-11-22-plaintext-ab). may_minihttp: MAY_BIN (bench/peers/README.md).
# Usage: OLD=path/to/old/twelve OUT=dir [ROUNDS=5] bench/tools/plaintext-ab.sh
#   NEW is the repository's target/bench-bin/twelve, built with
#   RUSTFLAGS="-C target-cpu=native" cargo build --profile bench-bin; OLD the same at c30cf84.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
mkdir -p "$OUT/raw"
taskset -c 0 "$OLD" serve --listen 127.0.0.1:8091 --cpus 0 > "$OUT/old.log" 2>&1 &
OLD_PID=$!
taskset -c 0 target/bench-bin/twelve serve --listen 127.0.0.1:8090 --cpus 0 > "$OUT/new.log" 2>&1 &
NEW_PID=$!
SERVER_CPU=0 bench/start-peers.sh may > "$OUT/peers.log" 2>&1
sleep 1
for p in 8090 8091 8083; do
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$p/plaintext" >/dev/null && break; sleep 0.2; done
done
bench/cpu-quota.sh 50 8090 8091 8083
OUTDIR="$OUT/raw" timeout 600 bench/wrk-rounds.sh plaintext "${ROUNDS:-5}" new=8090 old=8091 may=8083 \
  > "$OUT/plaintext.tsv"
bench/cpu-quota.sh off 8090 8091 8083
kill "$OLD_PID" "$NEW_PID"
bench/start-peers.sh stop >/dev/null 2>&1

#!/usr/bin/env bash
# bench/delay.sh - HttpArena's async profile on twelve: GET /delay/15 on 16,000 connections
# (closed model: every connection waits for its answer and asks again), and the same
# connections at fixed offered rates (open model, -R), against twelve's HttpArena entry
# (crates/engine/examples/httparena.rs) with one worker on CPU 0; twelve bench on CPU 1.
# Records the server's anonymous RSS while the requests wait (the memory per waiting request)
# and each run's JSON report (throughput, p99 of the corrected latency, errors). The client runs
# on epoll: its io_uring engine tops out at 4,096 open connections (EMFILE past them).
# Usage: CONNS=16000 DURATION=10s RATES="20000 50000" bench/delay.sh [OUT_DIR]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CONNS=${CONNS:-16000}; DURATION=${DURATION:-10s}; RATES=${RATES:-20000 50000}; MS=${MS:-15}
OUT=${1:-$ROOT/bench/runs/$(date -u +%F)-delay}
mkdir -p "$OUT/raw"
(cd "$ROOT" && RUSTFLAGS="-C target-cpu=native" cargo build -q --profile bench-bin \
  -p twelve-engine --example httparena)
SRV="$ROOT/target/bench-bin/examples/httparena"; BIN="$ROOT/target/bench-bin/twelve"
ulimit -n 1048576 2>/dev/null || ulimit -n "$(ulimit -Hn)"
taskset -c 0 "$SRV" 127.0.0.1:8095 > "$OUT/raw/server.log" 2>&1 &
PID=$!; trap 'kill $PID 2>/dev/null || true' EXIT
sleep 1
rss() { awk '/RssAnon/{print $2 * 1024}' "/proc/$PID/status"; }
idle=$(rss)
echo -e "run\trss_before_b\trss_loaded_b" > "$OUT/memory.tsv"
one() { # NAME ARGS...
  local name=$1; shift
  taskset -c 1 "$BIN" bench --cpus 1 --io epoll -c "$CONNS" -d "$DURATION" --warmup 2s --timeout 10s \
    --json "$@" "http://127.0.0.1:8095/delay/$MS" > "$OUT/raw/$name.json" 2> "$OUT/raw/$name.err" &
  local b=$!
  sleep 5; local loaded; loaded=$(rss)
  wait $b || true
  echo -e "$name\t$idle\t$loaded" >> "$OUT/memory.tsv"
}
one closed
for r in $RATES; do one "open-$r" -R "$r"; done
python3 - "$OUT" "$CONNS" "$MS" > "$OUT/summary.md" <<'PY'
import csv, json, os, sys
out, conns, ms = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
mem = {r['run']: r for r in csv.DictReader(open(f'{out}/memory.tsv'), delimiter='\t')}
print('| run | req/s | p50 ms | p99 ms | max ms | errors | server RssAnon growth per connection (B) |')
print('|---|---|---|---|---|---|---|')
for name in mem:
    j = json.load(open(f'{out}/raw/{name}.json'))
    lat = j['latency']['corrected']
    per = (int(mem[name]['rss_loaded_b']) - int(mem[name]['rss_before_b'])) / conns
    print(f"| {name} | {j['rps']:.0f} | {lat['p50_us'] / 1000:.2f} | {lat['p99_us'] / 1000:.2f} | {lat['max_us'] / 1000:.2f} | {j['errors']['total']} | {per:.0f} |")
PY
cat "$OUT/summary.md"

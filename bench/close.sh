#!/usr/bin/env bash
# bench/close.sh - connection per request: `twelve serve` before and after a change (two
# binaries) against nginx, capped at 50% of CPU 0, wrk with `Connection: close` and ab without
# keep-alive, interleaved rounds with bench/wrk-rounds.sh and ab-close.sh.
#
# Usage: bench/close.sh OLD_BINARY NEW_BINARY [OUTDIR]   (default bench/runs/<date>-close)
# Env:   ROUNDS=5  DURATION=10s  AB_N=20000
# Needs root (cgroup CPU cap), Debian's wrk, nginx, apache2-utils. Stops what it starts by PID.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OLD=${1:?old twelve binary}; NEW=${2:?new twelve binary}
OUT=${3:-$ROOT/bench/runs/$(date +%F)-close}
ROUNDS=${ROUNDS:-5}
export DURATION=${DURATION:-10s}
export DUR_S=${DURATION%s}
mkdir -p "$OUT/raw"
export OUTDIR="$OUT/raw"
PIDS=()
cleanup() {
  "$ROOT/bench/cpu-quota.sh" off 8090 8091 8081 >/dev/null 2>&1 || true
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  "$ROOT/bench/start-peers.sh" stop >/dev/null 2>&1 || true
}
trap cleanup EXIT
ulimit -n "$(ulimit -Hn)"
taskset -c 0 "$OLD" serve --listen 127.0.0.1:8091 --cpus 0 > "$OUT/raw/old.log" 2>&1 & PIDS+=($!)
taskset -c 0 "$NEW" serve --listen 127.0.0.1:8090 --cpus 0 > "$OUT/raw/new.log" 2>&1 & PIDS+=($!)
SERVER_CPU=0 "$ROOT/bench/start-peers.sh" nginx > "$OUT/raw/peers.log"
for p in 8090 8091 8081; do
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$p/json" >/dev/null && break; sleep 0.2; done
done
{
  echo "# Connection per request: twelve serve before and after, against nginx"
  echo
  echo "- date: $(date -u +%FT%TZ)"
  echo "- old: $("$OLD" --version)"
  echo "- new: $("$NEW" --version)"
  echo "- kernel: $(uname -r); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "- pinning: servers on CPU 0 (one worker each), capped at 50% of a core; clients on CPU 1"
  echo "- command: \`bench/close.sh OLD NEW\` (ROUNDS=$ROUNDS DURATION=$DURATION)"
} > "$OUT/README.md"
"$ROOT/bench/cpu-quota.sh" 50 8090 8091 8081 > "$OUT/raw/quota.log"
"$ROOT/bench/wrk-rounds.sh" close "$ROUNDS" old=8091 new=8090 nginx=8081 > "$OUT/close-capped.tsv"
N=${AB_N:-20000} "$ROOT/bench/ab-close.sh" "$ROUNDS" old=8091 new=8090 nginx=8081 > "$OUT/ab-close-capped.tsv"
{
  python3 "$ROOT/bench/summarize.py" "$OUT/close-capped.tsv"
  echo
  python3 - "$OUT/close-capped.tsv" "$OUT/ab-close-capped.tsv" <<'PY'
import csv, sys, statistics as st
from collections import defaultdict
def rounds(fn, col):
    by = defaultdict(dict)
    for r in csv.DictReader(open(fn), delimiter='\t'):
        by[r['round']][r['name']] = float(r[col])
    return by
for fn, col, what in [(sys.argv[1], 'rps', 'wrk Connection: close, req/s'),
                      (sys.argv[1], 'req_per_srv_cpu_s', 'wrk Connection: close, requests per server CPU-second'),
                      (sys.argv[2], 'rps', 'ab without -k, req/s')]:
    by = rounds(fn, col)
    for a, b in [('new', 'nginx'), ('new', 'old')]:
        ratios = [r[a] / r[b] for r in by.values() if a in r and b in r]
        med = {n: st.median([r[n] for r in by.values() if n in r]) for n in (a, b)}
        print(f"- {what}: {a} {med[a]:,.0f} vs {b} {med[b]:,.0f}, {a}/{b} {st.median(ratios):.3f} (median of per-round ratios)")
PY
} > "$OUT/summary.md"
cat "$OUT/summary.md"

#!/usr/bin/env bash
# bench/serve.sh - issue 3's benchmark: `twelve serve` against may_minihttp and nginx in the
# same run, with bench/peers/README.md's protocol: every server pinned to CPU 0 with one worker, wrk
# pinned to CPU 1, servers capped at 50% of a core, interleaved rounds, medians quoted.
#
# Usage: bench/serve.sh [OUTDIR]        (default bench/runs/<date>-serve)
# Env:   JSON_ROUNDS=5  PLAIN_ROUNDS=3  CLOSE_ROUNDS=3  DURATION=10s  PORT=8090
# Needs root (cgroup CPU cap), Debian's wrk, nginx, apache2-utils, linux-perf, and cargo.
# Every process it starts is stopped by PID on exit.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/bench/runs/$(date +%F)-serve}
JSON_ROUNDS=${JSON_ROUNDS:-5}; PLAIN_ROUNDS=${PLAIN_ROUNDS:-3}; CLOSE_ROUNDS=${CLOSE_ROUNDS:-3}
export DURATION=${DURATION:-10s}
export DUR_S=${DURATION%s}   # seconds, for CPU per request
PORT=${PORT:-8090}
mkdir -p "$OUT/raw"
export OUTDIR="$OUT/raw"

. "$ROOT/bench/common.sh"
start_servers /json nginx may

{
  echo "# twelve serve benchmark"
  echo
  echo "- date: $(date -u +%FT%TZ)"
  echo "- twelve: $("$BIN" --version)"
  echo "- commit: $(cd "$ROOT" && git rev-parse --short=12 HEAD)"
  echo "- kernel: $(uname -r)"
  echo "- cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) online"
  echo "- pinning: servers on CPU 0 (one worker each), wrk on CPU 1"
  echo "- wrk: $(wrk -v 2>&1 | head -1)"
  echo "- commands: \`bench/serve.sh\` (JSON_ROUNDS=$JSON_ROUNDS PLAIN_ROUNDS=$PLAIN_ROUNDS CLOSE_ROUNDS=$CLOSE_ROUNDS DURATION=$DURATION)"
} > "$OUT/README.md"

targets=("twelve=$PORT" "may=8083" "nginx=8081")

# 1. Capped at 50% of a core: the server is the bottleneck, not wrk.
"$ROOT/bench/cpu-quota.sh" 50 "$PORT" 8081 8083 > "$OUT/raw/quota.log"
"$ROOT/bench/wrk-rounds.sh" json "$JSON_ROUNDS" "${targets[@]}" > "$OUT/json-capped.tsv"
"$ROOT/bench/wrk-rounds.sh" plaintext "$PLAIN_ROUNDS" "${targets[@]}" > "$OUT/plaintext-capped.tsv"
"$ROOT/bench/wrk-rounds.sh" close "$CLOSE_ROUNDS" "twelve=$PORT" "nginx=8081" > "$OUT/close-capped.tsv"
N=${AB_N:-20000} "$ROOT/bench/ab-close.sh" "$CLOSE_ROUNDS" "twelve=$PORT" "nginx=8081" > "$OUT/ab-close-capped.tsv"
"$ROOT/bench/cpu-quota.sh" off "$PORT" 8081 8083 >> "$OUT/raw/quota.log"

# 2. Uncapped: CPU per request (user and kernel) from run.sh's per-process accounting.
"$ROOT/bench/wrk-rounds.sh" json 3 "${targets[@]}" > "$OUT/json-uncapped.tsv"

# 3. Syscalls per keep-alive json request: perf counts sys_enter of the server's threads
#    while wrk runs for a fixed time; divided by the requests wrk completed.
echo -e "name\trequests\tsyscalls\tsyscalls_per_req" > "$OUT/syscalls.tsv"
pid_of() { ss -Hltnp "sport = :$1" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2; }
for t in "${targets[@]}"; do
  name=${t%%=*}; port=${t##*=}; pid=$(pid_of "$port")
  perf stat -e raw_syscalls:sys_enter -p "$pid" -x, -o "$OUT/raw/perf-$name.csv" -- sleep 6 &
  perf_pid=$!
  sleep 0.5
  taskset -c 1 wrk -t1 -c256 -d5s -H 'Host: localhost' "http://127.0.0.1:$port/json" > "$OUT/raw/perf-wrk-$name.txt"
  wait "$perf_pid"
  reqs=$(awk '/requests in/{print $1}' "$OUT/raw/perf-wrk-$name.txt")
  sys=$(awk -F, '/raw_syscalls/{print $1}' "$OUT/raw/perf-$name.csv")
  echo -e "$name\t$reqs\t$sys\t$(awk -v s="$sys" -v r="$reqs" 'BEGIN{printf "%.3f", s/r}')" >> "$OUT/syscalls.tsv"
done

python3 - "$OUT" <<'PY' > "$OUT/summary.md"
import csv, sys, statistics as st, os
out = sys.argv[1]
def rows(name):
    p = os.path.join(out, name)
    return list(csv.DictReader(open(p), delimiter='\t')) if os.path.exists(p) else []
dur = float(os.environ['DUR_S'])
def med(xs): return st.median(xs) if xs else float('nan')
def table(name, title):
    rs = rows(name)
    if not rs: return
    print(f"## {title}\n\n| server | runs | req/s median (min-max) | p99 ms | server user µs/req | server kernel µs/req | wrk CPU frac |")
    print("|---|---|---|---|---|---|---|")
    by = {}
    for r in rs: by.setdefault(r['name'], []).append(r)
    for n, rr in by.items():
        rps = [float(r['rps']) for r in rr if r['rps']]
        us = [1e6 * float(r['srv_user_s']) / (float(r['rps']) * dur) for r in rr if r['rps']]
        ks = [1e6 * float(r['srv_sys_s']) / (float(r['rps']) * dur) for r in rr if r['rps']]
        print(f"| {n} | {len(rr)} | {med(rps):,.0f} ({min(rps):,.0f}-{max(rps):,.0f}) | {med([float(r['p99_ms']) for r in rr]):.2f} | {med(us):.2f} | {med(ks):.2f} | {med([float(r['wrk_cpu_frac']) for r in rr]):.2f} |")
    if 'twelve' in by and 'may' in by:
        t = med([float(r['rps']) for r in by['twelve']]); m = med([float(r['rps']) for r in by['may']])
        print(f"\ntwelve / may_minihttp (medians): {t/m:.3f}")
    if 'twelve' in by and 'nginx' in by:
        t = med([float(r['rps']) for r in by['twelve']]); m = med([float(r['rps']) for r in by['nginx']])
        print(f"twelve / nginx (medians): {t/m:.3f}")
    print()
table('json-capped.tsv', 'json, keep-alive, servers capped at 50% of CPU 0')
table('plaintext-capped.tsv', 'plaintext, pipelined 16, capped')
table('close-capped.tsv', 'json, Connection: close (wrk), capped')
table('json-uncapped.tsv', 'json, keep-alive, uncapped (CPU per request; wrk is the limit)')
ab = rows('ab-close-capped.tsv')
if ab:
    print("## ab (no keep-alive), capped\n\n| server | runs | req/s median (min-max) |\n|---|---|---|")
    by = {}
    for r in ab: by.setdefault(r['name'], []).append(float(r['rps'] or 'nan'))
    for n, v in by.items(): print(f"| {n} | {len(v)} | {med(v):,.0f} ({min(v):,.0f}-{max(v):,.0f}) |")
    print()
sc = rows('syscalls.tsv')
if sc:
    print("## syscalls per keep-alive json request (perf stat -e raw_syscalls:sys_enter, uncapped)\n\n| server | requests | syscalls | per request |\n|---|---|---|---|")
    for r in sc: print(f"| {r['name']} | {r['requests']} | {r['syscalls']} | {r['syscalls_per_req']} |")
PY
cat "$OUT/summary.md"

#!/usr/bin/env bash
# bench/cpu-split.sh - where a capped server's CPU goes on the pipelined plaintext test
# (or, with TEST=json, on keep-alive json), for twelve serve and a peer (PEER=may, may_minihttp
# on 8083, or PEER=libreactor on 8086) in the same run:
# each capped at 50% of CPU 0 (one worker), wrk -t1 -c256 on CPU 1 (plaintext: 16 requests per
# write), TechEmpower's header set (as bench/wrk-rounds.sh sends it), rounds interleaved. During each run perf samples CPU 0
# (cpu-clock) and the samples of the server's own threads are split into user space and kernel;
# with the run's server CPU time per request (utime + stime from /proc) that gives user and
# kernel µs per request, and `kernel_bound`: the req/s the 50% cap would allow if the server's
# user-space time were zero and its kernel time unchanged.
#
# Usage: bench/cpu-split.sh [OUTDIR]   (default bench/runs/<date>-<TEST>-split)
# Env:   TEST=plaintext|json  PEER=may|libreactor  ROUNDS=3  DURATION=10 (seconds)  PORT=8090
# Needs root (cgroup CPU cap), Debian's wrk and linux-perf, and cargo. Stops what it starts by PID.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TEST=${TEST:-plaintext}
PEER=${PEER:-may}
case $PEER in may) PEER_PORT=8083 ;; libreactor) PEER_PORT=8086 ;; *) echo "PEER must be may or libreactor" >&2; exit 2 ;; esac
OUT=${1:-$ROOT/bench/runs/$(date +%F)-$TEST-split}
ROUNDS=${ROUNDS:-3}; DURATION=${DURATION:-10}; PORT=${PORT:-8090}
mkdir -p "$OUT/raw"
. "$ROOT/bench/common.sh"
PERF_DATA=$(mktemp)
trap 'rm -f "$PERF_DATA"; stop_servers' EXIT
start_servers /plaintext "$PEER"
"$ROOT/bench/cpu-quota.sh" 50 "$PORT" "$PEER_PORT" > "$OUT/raw/quota.log"

pids_on_port() { ss -Hltnp "sport = :$1" | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u | tr '\n' ' '; }
tids_of() { for p in "$@"; do ls "/proc/$p/task"; done | tr '\n' ' '; }  # perf samples name threads
ticks() { # utime + stime of the given pids, in clock ticks
  local t=0 f
  for p in "$@"; do
    f=$(sed 's/.*) //' "/proc/$p/stat") || continue
    t=$((t + $(echo "$f" | awk '{print $12 + $13}')))
  done
  echo "$t"
}
case $TEST in
  plaintext) WRK_TAIL=(-s "$ROOT/bench/pipeline.lua") ;;
  json) WRK_TAIL=() ;;
  *) echo "TEST is plaintext or json" >&2; exit 2 ;;
esac
wrk_run() { # port seconds
  local url="http://127.0.0.1:$1/$TEST" depth=()
  [ "$TEST" = plaintext ] && depth=(-- 16)
  timeout $(($2 + 30)) taskset -c 1 wrk -t1 -c256 -d"$2s" --timeout 5s "${TFB_HDRS[@]}" \
    "${WRK_TAIL[@]}" "$url" "${depth[@]}"
}
HZ=$(getconf CLK_TCK)

printf 'server\tround\trps\tsrv_cpu_s\tus_per_req\tuser_share\tuser_us\tkernel_us\tkernel_bound_rps\n' \
  > "$OUT/split.tsv"
for ((r = 1; r <= ROUNDS; r++)); do
  for t in "twelve=$PORT" "$PEER=$PEER_PORT"; do
    name=${t%%=*}; port=${t##*=}
    pids=$(pids_on_port "$port")
    tids=$(tids_of $pids)
    wrk_run "$port" 2 > /dev/null   # warm-up, not measured
    sleep 1
    t0=$(ticks $pids)
    wrk_run "$port" "$DURATION" > "$OUT/raw/wrk-$name-$r.txt" &
    wrk_pid=$!
    sleep 2
    perf record -q -C 0 -e cpu-clock -F 1999 -o "$PERF_DATA" -- sleep $((DURATION - 4)) 2>/dev/null
    wait "$wrk_pid"
    t1=$(ticks $pids)
    # Samples per (thread, user or kernel); only the server's threads count. The text report is
    # kept, the binary perf.data is not.
    perf report -i "$PERF_DATA" --no-children --sort pid,dso --stdio 2>/dev/null \
      > "$OUT/raw/perf-$name-$r.txt"
    awk -v tids=" $tids " '
          /^ +[0-9.]+%/ {
            pct = $1 + 0; split($2, a, ":"); pid = a[1] + 0
            if (index(tids, " " pid " ") == 0) next
            if ($0 ~ /\[kernel\.kallsyms\]/) k += pct; else u += pct
          }
          END { printf "%.6f\n", ((u + k) > 0 ? u / (u + k) : 0) }' "$OUT/raw/perf-$name-$r.txt" \
      > "$OUT/raw/share-$name-$r.txt"
    reqs=$(awk '/requests in/{print $1}' "$OUT/raw/wrk-$name-$r.txt")
    rps=$(awk '/^Requests\/sec/{print $2}' "$OUT/raw/wrk-$name-$r.txt")
    share=$(cat "$OUT/raw/share-$name-$r.txt")
    awk -v n="$name" -v r="$r" -v rps="$rps" -v reqs="$reqs" -v dt=$((t1 - t0)) -v hz="$HZ" \
      -v share="$share" 'BEGIN {
        cpu = dt / hz; us = cpu / reqs * 1e6; user = us * share; kern = us - user
        printf "%s\t%d\t%.0f\t%.2f\t%.4f\t%.3f\t%.4f\t%.4f\t%.0f\n",
          n, r, rps, cpu, us, share, user, kern, 0.5 / kern * 1e6 }' >> "$OUT/split.tsv"
  done
done
"$ROOT/bench/cpu-quota.sh" off "$PORT" "$PEER_PORT" >> "$OUT/raw/quota.log"
column -t "$OUT/split.tsv"

#!/usr/bin/env bash
# bench/agreement.sh - does `twelve bench` measure a CPU-capped server as wrk does, and when is
# the capped server really the limit? For each server (twelve serve, may_minihttp, nginx) capped
# at 50% of CPU 0 by ../shared/bench/cpu-quota.sh (CFS bandwidth: 5 ms of CPU per 10 ms period)
# and each connection count, wrk and twelve bench run interleaved on CPU 1. Beside req/s and the
# client's CPU it records, from the cap's own cgroup (cpu.stat), how the server spent each
# period: running, throttled, or idle though allowed to run. Idle-while-allowed is time the
# server had answered everything and waited for the client: the client, not the cap, was the
# limit then, and a faster client measures more. For twelve serve it also reads the server's
# own request counter (/metrics) around each run, so each client's count can be checked against
# what the server answered. Last, a probe of the host itself: how much a busy CPU 1 slows a
# fixed loop on CPU 0 (on a VM whose two vCPUs share a physical core the client's own activity
# slows the server it measures).
#
# Usage: bench/agreement.sh [OUTDIR]      (default bench/runs/<date>-agreement)
# Env:   SHARED=../shared  ROUNDS=3  CONNS="256 1024 2048"  SERVERS="twelve may nginx"
#        DURATION_S=5  WARMUP_S=2  PORT=8090
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SHARED=${SHARED:-$ROOT/../shared}/bench
OUT=${1:-$ROOT/bench/runs/$(date +%F)-agreement}
ROUNDS=${ROUNDS:-3}; CONNS=${CONNS:-256 1024 2048}; SERVERS=${SERVERS:-twelve may nginx}
DURATION_S=${DURATION_S:-5}; WARMUP_S=${WARMUP_S:-2}; PORT=${PORT:-8090}
mkdir -p "$OUT/raw"

. "$ROOT/bench/common.sh"
peers=()
for s in $SERVERS; do [ "$s" = twelve ] || peers+=("$s"); done
start_servers /json "${peers[@]}"
declare -A PORTS=([twelve]=$PORT [nginx]=8081 [may]=8083)
"$SHARED/cpu-quota.sh" 50 "$PORT" "${PEER_PORTS[@]}" > "$OUT/raw/quota.log"
CG=$(awk '{print $3}' "$OUT/raw/quota.log")
[ -f "$CG/cpu.stat" ] || { echo "no cpu.stat in '$CG'" >&2; exit 1; }

HDRS=(-H 'Host: localhost' -H 'Accept: application/json,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7')
# Server CPU in ns: every thread of the cgroup, from its schedstat (exact, not tick-sampled).
srv_ns() {
  local tasks=$CG/tasks t sum=0
  [ -f "$tasks" ] || tasks=$CG/cgroup.threads
  for t in $(cat "$tasks"); do sum=$((sum + $(cut -d' ' -f1 "/proc/$t/schedstat" 2>/dev/null || echo 0))); done
  echo $sum
}
# Time the cgroup spent throttled, in ns (cgroup v1 throttled_time, v2 throttled_usec).
thr_ns() {
  awk '$1 == "throttled_time" {print $2} $1 == "throttled_usec" {print $2 * 1000}' "$CG/cpu.stat"
}
# Each prints "requests rps"; bash `time` around it gives the client's user and system CPU.
run_wrk() {
  timeout 60 taskset -c 1 wrk -t1 -c"$2" -d"${WARMUP_S}s" "${HDRS[@]}" "$1" > /dev/null 2>&1 || true
  snap_before
  { time timeout 60 taskset -c 1 wrk -t1 -c"$2" -d"${DURATION_S}s" --timeout 5s "${HDRS[@]}" \
      "$1" > "$3" 2>&1; } 2> "$3.time"
  snap_after
  echo "$(awk '/requests in/{print $1}' "$3") $(awk '/^Requests\/sec/{print $2}' "$3")"
}
run_twelve() {
  timeout 60 "$BIN" bench "$1" --cpus 1 -t1 -c"$2" -d"${WARMUP_S}s" --warmup 0 "${HDRS[@]}" \
    > /dev/null 2>&1 || true
  snap_before
  { time timeout 60 "$BIN" bench "$1" --cpus 1 -t1 -c"$2" -d"${DURATION_S}s" --warmup 0 \
      --timeout 5s "${HDRS[@]}" --json > "$3" 2> "$3.err"; } 2> "$3.time"
  snap_after
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["requests"], d["rps"])' "$3"
}
# twelve serve's own count of the requests it answered (0 for the peers, which keep none).
served() {
  [ "$SRV" = twelve ] || { echo 0; return; }
  curl -sf "http://127.0.0.1:$PORT/metrics" | awk '/^twelve_requests_total/ {s += $2} END {print s + 0}'
}
snap_before() { B_USE=$(srv_ns); B_THR=$(thr_ns); B_T=$(date +%s%N); B_SRV=$(served); }
snap_after() {
  local wall=$(($(date +%s%N) - B_T))
  # Server CPU, throttled time and idle-while-allowed as shares of the run's wall time.
  awk -v u=$(($(srv_ns) - B_USE)) -v t=$(($(thr_ns) - B_THR)) -v w="$wall" \
    -v n=$(($(served) - B_SRV)) 'BEGIN{printf "%.3f %.3f %.3f %d\n", u/w, t/w, 1-(u+t)/w, n}' > "$SNAP"
}

TSV="$OUT/runs.tsv"
echo -e "server\tconns\tclient\tround\trequests\trps\tclient_cpu_us_per_req\tsrv_busy\tsrv_throttled\tsrv_idle_allowed\tsrv_answered" > "$TSV"
TIMEFORMAT='%U %S %R'
for conns in $CONNS; do
  for ((r = 1; r <= ROUNDS; r++)); do
    for srv in $SERVERS; do
      SRV=$srv
      url="http://127.0.0.1:${PORTS[$srv]}/json"
      for client in wrk twelve; do
        f="$OUT/raw/$srv-c$conns-$client-$r.out"
        SNAP="$f.cg"
        read -r reqs rps < <(run_$client "$url" "$conns" "$f")
        read -r u s _ < "$f.time"
        cpu=$(awk -v u="$u" -v s="$s" -v n="$reqs" 'BEGIN{printf "%.3f", 1e6*(u+s)/n}')
        read -r busy thr idle answered < "$SNAP"
        echo -e "$srv\t$conns\t$client\t$r\t$reqs\t$rps\t$cpu\t$busy\t$thr\t$idle\t$answered" >> "$TSV"
        sleep 1
      done
    done
  done
done

# The host probe: a fixed loop on CPU 0, alone and beside a spinning CPU 1, interleaved.
PROBE="$OUT/host-probe.tsv"
echo -e "round\tcpu1\tloop_s" > "$PROBE"
loop() { taskset -c 0 python3 -c 'import time
t = time.perf_counter(); x = 0
for i in range(10_000_000): x += i * i
print(f"{time.perf_counter() - t:.3f}")'; }
for ((r = 1; r <= ROUNDS; r++)); do
  echo -e "$r\tidle\t$(loop)" >> "$PROBE"
  timeout 30 taskset -c 1 python3 -c 'while True: pass' & spin=$!
  sleep 0.2
  echo -e "$r\tbusy\t$(loop)" >> "$PROBE"
  kill "$spin"; wait "$spin" 2>/dev/null || true
done

{
  echo "# twelve bench vs wrk on CPU-capped servers, by connection count"
  echo
  echo "- date: $(date -u +%FT%TZ); twelve: $("$BIN" --version); commit: $(cd "$ROOT" && git rev-parse --short=12 HEAD)"
  echo "- kernel: $(uname -r); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "- servers on CPU 0 (one worker) capped at 50% (5 ms per 10 ms period), clients -t1 on CPU 1;"
  echo "  ${DURATION_S}s runs after a separate ${WARMUP_S}s warm-up, wrk and twelve bench interleaved, ROUNDS=$ROUNDS"
  echo "- command: \`ROUNDS=$ROUNDS CONNS=\"$CONNS\" SERVERS=\"$SERVERS\" DURATION_S=$DURATION_S bench/agreement.sh\`"
  echo "- server columns are shares of wall time: busy from its threads' schedstat,"
  echo "  throttled from the cap's cpu.stat, idle while allowed the rest"
  echo
  python3 - "$TSV" "$PROBE" <<'PY'
import csv, sys, statistics as st
rs = list(csv.DictReader(open(sys.argv[1]), delimiter='\t'))
g = {}
for r in rs: g.setdefault((r['server'], int(r['conns']), r['client']), []).append(r)
med = lambda v, k: st.median(float(r[k]) for r in v)
print("| server | -c | client | req/s median | client CPU µs/req | server busy | throttled | idle while allowed |")
print("|---|---|---|---|---|---|---|---|")
for (s, c, cl), v in sorted(g.items()):
    print(f"| {s} | {c} | {cl} | {med(v,'rps'):,.0f} | {med(v,'client_cpu_us_per_req'):.2f} | "
          f"{med(v,'srv_busy'):.3f} | {med(v,'srv_throttled'):.3f} | {med(v,'srv_idle_allowed'):.3f} |")
print()
for (s, c, cl), w in sorted(g.items()):
    if cl != 'wrk' or (s, c, 'twelve') not in g: continue
    t = g[(s, c, 'twelve')]
    # Per-round ratios: round r of both clients ran back to back and saw the same noise.
    ratio = st.median(float(b['rps']) / float(a['rps']) for a, b in zip(w, t))
    line = f"- {s}, -c{c}: req/s twelve bench / wrk {ratio:.3f} (median of per-round ratios)"
    if s == 'twelve':
        # What the server answered beyond each client's count: the requests still in flight
        # when the client stopped (at most -c) and the /metrics read itself.
        extra = {cl: max(int(r['srv_answered']) - int(r['requests']) for r in v)
                 for cl, v in (('wrk', w), ('twelve bench', t))}
        line += "; server answered minus client counted, largest: " + ", ".join(
            f"{cl} {x}" for cl, x in extra.items())
    print(line)
p = list(csv.DictReader(open(sys.argv[2]), delimiter='\t'))
idle = st.median(float(r['loop_s']) for r in p if r['cpu1'] == 'idle')
busy = st.median(float(r['loop_s']) for r in p if r['cpu1'] == 'busy')
print(f"\nHost probe (host-probe.tsv): a fixed loop on CPU 0 took {idle:.3f} s with CPU 1 idle and "
      f"{busy:.3f} s with CPU 1 spinning ({busy / idle:.2f} x, medians)")
PY
} > "$OUT/summary.md"
cat "$OUT/summary.md"

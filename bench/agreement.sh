#!/usr/bin/env bash
# bench/agreement.sh - does `twelve bench` measure a CPU-capped server as wrk does, and if not,
# why? For each server (twelve serve, may_minihttp, nginx) capped at 50% of CPU 0 by
# bench/cpu-quota.sh (CFS bandwidth: 5 ms of CPU per 10 ms period) and each
# connection count, wrk and twelve bench run in turn on CPU 1 (which goes first alternates by
# round). Beside req/s and the client's CPU per request it records the server's: its CPU per
# request over the whole run, and how it spent the middle of the run (from 1 s after the start
# to 1 s before the end): busy, throttled by the cap, or idle though the cap allowed it to run.
# When the server is busy for its whole quota under both clients, their req/s can differ only
# by the server's CPU per request, that is by what each client's timing costs the server. For
# twelve serve it also reads the server's own request counter (/metrics) around each run, so
# each client's count can be checked against what the server answered.
#
# Usage: bench/agreement.sh [OUTDIR]      (default bench/runs/<date>-agreement)
# Env:   ROUNDS=3  CONNS="64 256 1024"  SERVERS="twelve nginx may"
#        DURATION_S=5 (at least 3)  WARMUP_S=2  PORT=8090
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/bench/runs/$(date +%F)-agreement}
ROUNDS=${ROUNDS:-3}; CONNS=${CONNS:-64 256 1024}; SERVERS=${SERVERS:-twelve nginx may}
DURATION_S=${DURATION_S:-5}; WARMUP_S=${WARMUP_S:-2}; PORT=${PORT:-8090}
[ "$DURATION_S" -ge 3 ] || { echo "DURATION_S must be at least 3" >&2; exit 2; }
mkdir -p "$OUT/raw"

. "$ROOT/bench/common.sh"
peers=()
for s in $SERVERS; do [ "$s" = twelve ] || peers+=("$s"); done
start_servers /json "${peers[@]}"
declare -A PORTS=([twelve]=$PORT [nginx]=8081 [may]=8083)
"$ROOT/bench/cpu-quota.sh" 50 "$PORT" "${PEER_PORTS[@]}" > "$OUT/raw/quota.log"
CG=$(awk '{print $3}' "$OUT/raw/quota.log")
[ -f "$CG/cpu.stat" ] || { echo "no cpu.stat in '$CG'" >&2; exit 1; }

# Server CPU in ns: every thread of the cgroup, from its schedstat (exact, not tick-sampled;
# the servers here start no threads and end none while they serve).
srv_ns() {
  local tasks=$CG/tasks t sum=0
  [ -f "$tasks" ] || tasks=$CG/cgroup.threads
  for t in $(cat "$tasks"); do sum=$((sum + $(cut -d' ' -f1 "/proc/$t/schedstat" 2>/dev/null || echo 0))); done
  echo $sum
}
# Time the cgroup spent throttled, in ns (cgroup v1 throttled_time, v2 throttled_usec). Printed
# with %.0f: mawk writes large products in exponent form.
thr_ns() {
  awk '$1 == "throttled_time" {print $2} $1 == "throttled_usec" {printf "%.0f\n", $2 * 1000}' "$CG/cpu.stat"
}
# twelve serve's own count of the requests it answered (0 for the peers, which keep none).
served() {
  [ "$SRV" = twelve ] || { echo 0; return; }
  local m
  m=$(curl -sf --max-time 2 "http://127.0.0.1:$PORT/metrics") ||
    { echo "agreement.sh: cannot read twelve serve's /metrics" >&2; return 1; }
  awk '/^twelve_requests_total/ {s += $2} END {print s + 0}' <<< "$m"
}
# Starts one client in the background, bounded, its bash `time` in $4.time; sets CLIENT.
start_client() {
  case $1 in
    wrk) { time timeout 60 taskset -c 1 wrk -t1 -c"$3" -d"${DURATION_S}s" --timeout 5s \
             "${TFB_HDRS[@]}" "$2" > "$4" 2>&1; } 2> "$4.time" & ;;
    twelve) { time timeout 60 "$BIN" bench "$2" --cpus 1 -t1 -c"$3" -d"${DURATION_S}s" \
                --warmup 0 --timeout 5s "${TFB_HDRS[@]}" --json > "$4" 2> "$4.err"; } 2> "$4.time" & ;;
  esac
  CLIENT=$!
}
# The same client for the warm-up, as a separate run, so neither is charged for it.
warm_up() {
  case $1 in
    wrk) timeout 60 taskset -c 1 wrk -t1 -c"$3" -d"${WARMUP_S}s" "${TFB_HDRS[@]}" "$2" ;;
    twelve) timeout 60 "$BIN" bench "$2" --cpus 1 -t1 -c"$3" -d"${WARMUP_S}s" --warmup 0 \
              "${TFB_HDRS[@]}" ;;
  esac > /dev/null 2>&1 || true
}
TSV="$OUT/runs.tsv"
COLS=(server conns client round requests rps wall_s client_cpu_us_per_req srv_cpu_us_per_req
      srv_busy srv_throttled srv_idle_allowed srv_answered)
(IFS=$'\t'; echo "${COLS[*]}") > "$TSV"
TIMEFORMAT='%U %S %R'
for conns in $CONNS; do
  for ((r = 1; r <= ROUNDS; r++)); do
    order="wrk twelve"; [ $((r % 2)) = 0 ] && order="twelve wrk"
    for srv in $SERVERS; do
      SRV=$srv
      url="http://127.0.0.1:${PORTS[$srv]}/json"
      for client in $order; do
        f="$OUT/raw/$srv-c$conns-$client-$r.out"
        warm_up "$client" "$url" "$conns"
        b_srv=$(served); b_use=$(srv_ns)
        start_client "$client" "$url" "$conns" "$f"
        sleep 1
        m_use=$(srv_ns); m_thr=$(thr_ns); m_t=$(date +%s%N)
        sleep $((DURATION_S - 2))
        z_use=$(srv_ns); z_thr=$(thr_ns); z_t=$(date +%s%N)
        wait "$CLIENT" ||
          { echo "agreement.sh: $client against $srv at -c$conns, round $r, failed: see $f" >&2; exit 1; }
        e_use=$(srv_ns); answered=$(($(served) - b_srv))
        client_counts "$client" "$f" > "$f.res" && read -r reqs rps < "$f.res" ||
          { echo "agreement.sh: no request count in $f" >&2; exit 1; }
        read -r u s w < "$f.time"
        awk -v srv="$srv" -v c="$conns" -v cl="$client" -v r="$r" -v n="$reqs" -v rps="$rps" \
          -v w="$w" -v u="$u" -v s="$s" -v e=$((e_use - b_use)) -v mu=$((z_use - m_use)) \
          -v mt=$((z_thr - m_thr)) -v mw=$((z_t - m_t)) -v a="$answered" 'BEGIN {
            printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%d\n", srv, c, cl, r,
              n, rps, w, 1e6 * (u + s) / n, e / 1e3 / n, mu / mw, mt / mw, 1 - (mu + mt) / mw, a
          }' >> "$TSV"
        sleep 1
      done
    done
  done
done

{
  echo "# twelve bench vs wrk on CPU-capped servers, by connection count"
  echo
  echo "- date: $(date -u +%FT%TZ); twelve: $("$BIN" --version)"
  echo "- tree: $(cd "$ROOT" && git describe --always --dirty --abbrev=12)"
  echo "- kernel: $(uname -r); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "- servers on CPU 0 (one worker) capped at 50% (5 ms per 10 ms period), clients -t1 on CPU 1;"
  echo "  ${DURATION_S}s runs after a separate ${WARMUP_S}s warm-up; wrk first in odd rounds,"
  echo "  twelve bench in even ones"
  echo "- command: \`ROUNDS=$ROUNDS CONNS=\"$CONNS\" SERVERS=\"$SERVERS\" DURATION_S=$DURATION_S bench/agreement.sh\`"
  echo "- server CPU per request: its threads' schedstat over the whole run / the client's count;"
  echo "  busy, throttled and idle while allowed: shares of the middle of the run (1 s in to 1 s"
  echo "  before the end), from the threads' schedstat and the cap's cpu.stat"
  echo
  python3 - "$TSV" <<'PY'
import csv, sys, statistics as st
rs = list(csv.DictReader(open(sys.argv[1]), delimiter='\t'))
g = {}
for r in rs: g.setdefault((r['server'], int(r['conns']), r['client']), []).append(r)
med = lambda v, k: st.median(float(r[k]) for r in v)
cols = ["server", "-c", "client", "req/s", "client CPU µs/req", "server CPU µs/req",
        "server busy", "throttled", "idle while allowed"]
print("| " + " | ".join(cols) + " |")
print("|" + "---|" * len(cols))
for (s, c, cl), v in sorted(g.items()):
    print(f"| {s} | {c} | {cl} | {med(v,'rps'):,.0f} | {med(v,'client_cpu_us_per_req'):.2f} | "
          f"{med(v,'srv_cpu_us_per_req'):.2f} | {med(v,'srv_busy'):.3f} | "
          f"{med(v,'srv_throttled'):.3f} | {med(v,'srv_idle_allowed'):.3f} |")
print("\n(medians over the rounds)\n")
for (s, c, cl), w in sorted(g.items()):
    if cl != 'wrk' or (s, c, 'twelve') not in g: continue
    t = g[(s, c, 'twelve')]
    by_round = {r['round']: r for r in w}
    pairs = [(by_round[b['round']], b) for b in t if b['round'] in by_round]
    # Per-round ratios: round r of both clients ran back to back and saw the same noise.
    def ratio(k):
        xs = sorted(float(b[k]) / float(a[k]) for a, b in pairs)
        return f"{st.median(xs):.3f} ({xs[0]:.3f}-{xs[-1]:.3f})"
    line = (f"- {s}, -c{c}: twelve bench / wrk, median (range) of {len(pairs)} per-round ratios: "
            f"req/s {ratio('rps')}, server CPU per request {ratio('srv_cpu_us_per_req')}")
    if s == 'twelve':
        # What the server answered beyond each client's count: the requests still in flight
        # when the client stopped (at most -c) and the /metrics read itself.
        extra = {cl: max(int(r['srv_answered']) - int(r['requests']) for r in v)
                 for cl, v in (('wrk', w), ('twelve bench', t))}
        line += "; twelve serve answered beyond the client's count, at most: " + ", ".join(
            f"{cl} {x}" for cl, x in extra.items())
    print(line)
PY
} > "$OUT/summary.md"
cat "$OUT/summary.md"

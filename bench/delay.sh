#!/usr/bin/env bash
# bench/delay.sh - HttpArena's async profile on twelve: GET /delay/{ms} answered after ms
# milliseconds on the worker's timer wheel, against twelve's HttpArena entry
# (crates/engine/examples/httparena.rs) with one worker on CPU 0 capped at half of it
# (bench/cpu-quota.sh 50); twelve bench on CPU 1 (epoll: its io_uring engine stops at 4,096
# open connections).
#
# 16,000 connections cannot all be opened at once here: the listener's accept queue holds
# net.core.somaxconn (4,096) connections and the kernel drops the SYNs beyond it, to be sent
# again 1, 3 and 7 s later; with the client's default 2 s connect timeout, most connects
# failed. So every run gets --connect-timeout 30s and a warm-up long enough for the
# retransmitted SYNs (WARMUP, 20s), and the connections come from several source addresses
# (--source: each its own range of local ports, so TIME_WAIT left by an earlier run costs
# none). And 16,000 connections each asking again as soon as answered would offer
# 16,000 / 15 ms = 1.07 M requests a second to half a core; the runs are:
#
# 1. capacity: the closed model on CAP_CONNS connections of GET /delay/MS: what the capped
#    server answers per second when it is the limit.
# 2. open-R for each R of RATES: CONNS connections, R requests a second (Poisson arrivals) of
#    GET /delay/MS: the p99 of the corrected latency against the 20 ms target, errors, RSS
#    (the peak since the server started: the allocator keeps what it took).
# 3. hold, on a server of its own: CONNS connections each with one request waiting HOLD_MS
#    (an hour, never answered in the run): the server's anonymous RSS over its idle RSS, per
#    waiting request (the memory target), and the connections the server holds (ss).
#
# The server's RSS is read each second of a run's loaded part; its connections are counted once,
# two seconds before the warm-up ends: `ss` walks every established socket in the kernel (both
# ends of 16,000 loopback connections: tens of ms of system time a call), unpinned, so once a
# second it took the server's CPU in the middle of the measured part.
#
# SERVERS="NAME=PATH ..." runs each of several builds of the example in turn in every round
# (A B A B ...: a before/after comparison in one run); each run's name then carries the
# server's NAME (open-2000-NAME-1). Without it, the example is built from this tree.
#
# After each round, bench/tools/stall-probe.py spins on CPU 0 for DURATION: for each rate, the
# lateness that gaps in which CPU 0 ran nothing of the probe's (the hypervisor's steal,
# interrupts, other tasks) would add to answers due on that schedule. Its p99 is a floor under
# what any server there could add to the 15 ms at that time.
#
# HOLD=0 leaves the hold runs out (a latency comparison). SCHED=fifo runs the server and the
# client under SCHED_FIFO priority 1 (chrt), so that other processes on a shared host do not
# delay their wake-ups; it needs QUOTA=off (an RT task cannot join a CFS-quota cgroup whose RT
# runtime is 0), so the server is not capped then.
#
# Usage: ROUNDS=1 DURATION=10s CONNS=16000 RATES="2000 4000" [SERVERS=...] bench/delay.sh [OUT_DIR]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CONNS=${CONNS:-16000}; DURATION=${DURATION:-10s}; RATES=${RATES:-2000 4000}; MS=${MS:-15}
ROUNDS=${ROUNDS:-1}; WARMUP=${WARMUP:-20s}; HOLD_MS=${HOLD_MS:-3600000}; CAP_CONNS=${CAP_CONNS:-256}
QUOTA=${QUOTA:-50}; HOLD=${HOLD:-1}; SCHED=${SCHED:-other}; SOURCES=${SOURCES:-127.0.0.2-127.0.0.9}; PORT=8095
export QUOTA_CGROUP=${QUOTA_CGROUP:-twelve-delay}
OUT=${1:-$ROOT/bench/runs/$(date -u +%F)-delay}
mkdir -p "$OUT/raw"
if [ -z "${SERVERS:-}" ]; then
  (cd "$ROOT" && RUSTFLAGS="-C target-cpu=native" cargo build -q --profile bench-bin \
    -p twelve-engine --example httparena)
  SERVERS="=$ROOT/target/bench-bin/examples/httparena"
fi
for s in $SERVERS; do [ -x "${s#*=}" ] || { echo "bench/delay.sh: SERVERS: ${s#*=} is not an executable" >&2; exit 2; }; done
BIN=${TWELVE_BIN:-$ROOT/target/bench-bin/twelve}
[ -x "$BIN" ] || (cd "$ROOT" && RUSTFLAGS="-C target-cpu=native" cargo build -q --profile bench-bin -p twelve --bin twelve)
case $SCHED in
  other) RUN=() ;;
  fifo) RUN=(chrt -f 1); [ "$QUOTA" = off ] || { echo "bench/delay.sh: SCHED=fifo needs QUOTA=off" >&2; exit 2; } ;;
  *) echo "bench/delay.sh: SCHED=$SCHED: expected other or fifo" >&2; exit 2 ;;
esac
ulimit -n 1048576 2>/dev/null || ulimit -n "$(ulimit -Hn)"
[ "$(ulimit -n)" -gt $((CONNS + 100)) ] || { echo "bench/delay.sh: ulimit -n $(ulimit -n) is below CONNS=$CONNS" >&2; exit 2; }
PID=
stop() { [ -z "$PID" ] || { kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; PID=; }; }
trap '"$ROOT/bench/cpu-quota.sh" off $PORT >/dev/null 2>&1 || true; stop' EXIT
start() { # NAME: a fresh server (the allocator keeps what a run took: a new process per phase)
  stop
  "${RUN[@]}" taskset -c 0 "$SRV" "127.0.0.1:$PORT" > "$OUT/raw/server-$1.log" 2>&1 &
  PID=$!
  sleep 1
  [ "$QUOTA" = off ] || "$ROOT/bench/cpu-quota.sh" "$QUOTA" "$PORT" > "$OUT/raw/quota-$1.txt"
  idle=$(rss)
}
rss() { awk '/RssAnon/{print $2 * 1024}' "/proc/$PID/status"; }
held() { ss -Htn state established "sport = :$PORT" | wc -l; }
# The CFS periods in which the server's quota ran out (cgroup v1 or v2); "-" without a quota.
throttled() {
  local f
  for f in "/sys/fs/cgroup/cpu/$QUOTA_CGROUP/cpu.stat" "/sys/fs/cgroup/$QUOTA_CGROUP/cpu.stat"; do
    [ -f "$f" ] && { awk '$1 == "nr_throttled" {print $2}' "$f"; return; }
  done
  echo -
}
echo -e "run\trss_idle_b\trss_loaded_b\tconns_held\tthrottled_periods" > "$OUT/memory.tsv"
bench() { # NAME SAMPLE_AFTER_S ARGS... (the last is the URL)
  local name=$1 after=$2; shift 2
  "${RUN[@]}" taskset -c 1 "$BIN" bench --cpus 1 --io epoll --connect-timeout 30s --source "$SOURCES" \
    --json "$@" > "$OUT/raw/$name.json" 2> "$OUT/raw/$name.err" &
  local b=$! best=0 most r t0 t1= d= n=0 a prev=
  # The measured part's length (-d, whole seconds), to read the quota's count when it ends:
  # read when the client exits, it would take in the close of every connection.
  for a in "$@"; do [ "$prev" = -d ] && d=${a%s}; prev=$a; done
  [[ $d =~ ^[0-9]+$ ]] || d=
  # The connections once, before the measured part; the RSS peak over the run's loaded part;
  # the periods the quota ran out in over the measured part.
  sleep $((after > 3 ? after - 2 : 1))
  most=$(held)
  sleep $((after > 3 ? 2 : after - 1))
  t0=$(throttled)
  while kill -0 $b 2>/dev/null; do
    r=$(rss)
    [ "$r" -gt "$best" ] && best=$r
    sleep 1
    n=$((n + 1))
    if [ -z "$t1" ] && [ -n "$d" ] && [ "$n" -ge "$d" ]; then t1=$(throttled); fi
  done
  wait $b || true
  [ -n "$t1" ] || t1=$(throttled)
  [ "$t0" = - ] || [ "$t1" = - ] || t1=$((t1 - t0))
  echo -e "$name\t$idle\t$best\t$most\t$t1" >> "$OUT/memory.tsv"
}
url() { echo "http://127.0.0.1:$PORT/delay/$1"; }
for r in $(seq "$ROUNDS"); do
  for s in $SERVERS; do
    SRV=${s#*=}; tag=${s%%=*}; tag=${tag:+$tag-}
    start "load-$tag$r"
    bench "capacity-$tag$r" 2 -c "$CAP_CONNS" -d "$DURATION" --warmup 2s --timeout 10s "$(url "$MS")"
    for rate in $RATES; do
      bench "open-$rate-$tag$r" "${WARMUP%s}" -c "$CONNS" -d "$DURATION" --warmup "$WARMUP" \
        --timeout 10s -R "$rate" "$(url "$MS")"
    done
    [ "$HOLD" = 1 ] || continue
    start "hold-$tag$r"
    # Connected within the warm-up; the requests then wait the whole run. Nothing is answered,
    # so the report says it could not measure: only the samples count here.
    bench "hold-$tag$r" "${WARMUP%s}" -c "$CONNS" -d 10s --warmup "$WARMUP" --timeout 300s \
      "$(url "$HOLD_MS")"
  done
  # The answers' lateness no server on CPU 0 could avoid in this round: answers due at each
  # rate that fall in gaps a thread spinning on CPU 0 did not run (bench/tools/stall-probe.py),
  # after the round's runs, with the last server idle.
  taskset -c 0 python3 "$ROOT/bench/tools/stall-probe.py" "${DURATION%s}" $RATES > "$OUT/raw/stall-cpu0-$r.json"
done
stop
python3 - "$OUT" "$CONNS" "$MS" > "$OUT/summary.md" <<'PY'
import csv, json, sys
out, conns, ms = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = list(csv.DictReader(open(f'{out}/memory.tsv'), delimiter='\t'))
print('| run | conns held (server) | req/s | p50 ms | p99 ms | p99 uncorrected ms | max ms | errors | server RssAnon over idle per connection (B) | quota periods throttled |')
print('|---|---|---|---|---|---|---|---|---|---|')
for m in rows:
    name = m['run']
    per = (int(m['rss_loaded_b']) - int(m['rss_idle_b'])) / conns
    try:
        j = json.load(open(f'{out}/raw/{name}.json'))
        lat = j['latency']['corrected']
        unc = j['latency']['uncorrected']['p99_us'] / 1000
        cells = f"{j['rps']:.0f} | {lat['p50_us'] / 1000:.2f} | {lat['p99_us'] / 1000:.2f} | {unc:.2f} | {lat['max_us'] / 1000:.2f} | {j['errors']['total']}"
    except (OSError, ValueError, KeyError, TypeError):
        cells = '- | - | - | - | - | -'
    if name.startswith('capacity'):
        per = float('nan')
    print(f"| {name} | {m['conns_held']} | {cells} | {per:.0f} | {m['throttled_periods']} |")
# The median p99 (corrected) per server and rate over the rounds.
import re, statistics
p99 = {}
for m in rows:
    g = re.fullmatch(r'open-(\d+)-(?:(.+)-)?(\d+)', m['run'])
    if not g:
        continue
    try:
        j = json.load(open(f"{out}/raw/{m['run']}.json"))
        p99.setdefault((g[2] or '', int(g[1])), []).append(j['latency']['corrected']['p99_us'] / 1000)
    except (OSError, ValueError, KeyError, TypeError):
        pass
if p99:
    print()
    print('| server | rate | p99 ms per round | median p99 ms |')
    print('|---|---|---|---|')
    for (srv, rate), v in sorted(p99.items()):
        print(f"| {srv or '-'} | {rate} | {' / '.join(f'{x:.2f}' for x in v)} | {statistics.median(v):.2f} |")
import glob, os
probes = sorted(glob.glob(f'{out}/raw/stall-cpu0-*.json'))
if probes:
    print()
    print('CPU 0 after each round (bench/tools/stall-probe.py): the lateness gaps in which it ran nothing of a spinning thread would add to answers due at each rate, ms')
    print()
    print('| round | gaps | stalled ms | steal ms | longest gap ms | rate | floor p99 | floor p99.9 |')
    print('|---|---|---|---|---|---|---|---|')
    for f in probes:
        try:
            p = json.load(open(f))
        except (OSError, ValueError):
            continue
        rnd = os.path.basename(f)[len('stall-cpu0-'):-len('.json')]
        for rate, q in sorted(p['rates'].items(), key=lambda kv: int(kv[0])):
            print(f"| {rnd} | {p['gaps']} | {p['stalled_ms']:.1f} | {p['steal_ms']:.1f} | {p['longest_gap_us'] / 1000:.2f} | {rate} | {q['p99_us'] / 1000:.2f} | {q['p999_us'] / 1000:.2f} |")
PY
cat "$OUT/summary.md"

#!/usr/bin/env bash
# bench/kernel-profile.sh - where a capped server's CPU goes (issue 13: "perf profiles of the
# capped server on both backends, with the share that is the client's wake-up the server pays
# for on loopback"; issue 14: how much of a pipelined request is user space at all). Each server
# runs alone, pinned to CPU 0 and capped at 50% of a core (bench/cpu-quota.sh), the
# client on CPU 1; `perf record -g` samples the server's process for the middle $SAMPLE seconds.
# Two workloads (WORKLOAD):
#   json       keep-alive TechEmpower json, wrk -t1 -c$CONNS with TechEmpower's headers; servers
#              twelve, twelve-uring (`twelve serve`) and libreactor
#   pipelined  HttpArena's pipelined profile as HttpArena runs it: gcannon -c$CONNS -p 16 on
#              GET /pipeline (Host only); servers twelve, twelve-uring (twelve-engine's
#              httparena example), ringzero, libreactorng and rust-epoll
#   baseline   HttpArena's baseline profile: gcannon -c$CONNS -p 1 with its three requests
#              (GET, POST Content-Length, POST chunked on /baseline11); the same servers
#   json-fixed, baseline-fixed
#              issue 13's fixed offered rate (bench/peers.sh's fixed section): twelve bench's
#              open model, -R $RATE (required) on -c$CONNS (64), GET /json with the json
#              servers, GET /baseline11?a=13&b=42 with the HttpArena ones. These run
#              uncapped: at a rate that leaves the cap unused, capping changes nothing, and at
#              one near it (60% of a capped peak already reached 96% of the cap on 2026-11-26)
#              the cap, not the server, sets the CPU per request.
# Besides each class's share, the summary gives its server CPU time per request: the server's
# CPU time over the whole client run (utime + stime of every process holding the listener)
# over the requests the client counted, times the share.
# Every sample is put in one class by the frames on its stack, in this order (first match):
#
#   user            no kernel frame
#   wake client     the client's wake-up: whatever runs under the client socket's data-ready
#                   callback (sock_def_readable: the wait-queue walk, ep_poll_callback, the
#                   wake-up of the thread in epoll_wait), reached from the server's send
#   loopback rx     the client socket's receive path run in the server's context on loopback
#                   (tcp_v4_rcv, process_backlog, __netif_receive_skb, net_rx_action)
#   send            the rest of the send path (tcp_sendmsg, sendfile, io_uring send)
#   recv            tcp_recvmsg and what it calls
#   epoll           epoll_wait / epoll_ctl / ep_* (the epoll backend's readiness)
#   io_uring        io_uring_enter and the ring's own work not in a class above
#   sched           the server's own sleep and wake-up (schedule, __schedule, finish_task_switch)
#   entry           syscall entry and exit (entry_SYSCALL_64, syscall_exit_to_user_mode, ...)
#   other kernel    the rest
#
# Usage: bench/kernel-profile.sh [OUTDIR]      (default bench/runs/<date>-kernel-profile)
# Env:   WORKLOAD=json|pipelined|baseline  SERVERS (default: the workload's list above)
#        CONNS=256 (json) or 512 (pipelined, HttpArena's)  DURATION=14  SAMPLE=8  FREQ=2999
#        LIBREACTOR_BIN=/tmp/peers/libreactor-8086/libreactor  ARENA_BIN=/tmp/peers/httparena
#        PORT=8090
# Needs root, perf (Debian linux-perf), wrk (json) or gcannon (pipelined), curl, cargo. Stops
# what it starts by PID.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/bench/runs/$(date +%F)-kernel-profile}
WORKLOAD=${WORKLOAD:-json}
case $WORKLOAD in
  json) SERVERS=${SERVERS:-twelve twelve-uring libreactor}; CONNS=${CONNS:-256}; PATH_=/json ;;
  pipelined | baseline) SERVERS=${SERVERS:-twelve twelve-uring ringzero libreactorng rust-epoll}
             CONNS=${CONNS:-512}; PATH_=/pipeline ;;
  json-fixed) SERVERS=${SERVERS:-twelve twelve-uring libreactor}; CONNS=${CONNS:-64}; PATH_=/json ;;
  baseline-fixed) SERVERS=${SERVERS:-twelve twelve-uring ringzero libreactorng rust-epoll}
                  CONNS=${CONNS:-64}; PATH_=/pipeline ;;
  *) echo "WORKLOAD must be json, pipelined, baseline, json-fixed or baseline-fixed" >&2; exit 2 ;;
esac
case $WORKLOAD in
  *-fixed) [[ ${RATE:-} =~ ^[0-9]+$ ]] || { echo "WORKLOAD=$WORKLOAD needs RATE (req/s)" >&2; exit 2; } ;;
esac
DURATION=${DURATION:-14}; SAMPLE=${SAMPLE:-8}; FREQ=${FREQ:-2999}
PORT=${PORT:-8090}
LIBREACTOR_BIN=${LIBREACTOR_BIN:-/tmp/peers/libreactor-8086/libreactor}
ARENA_BIN=${ARENA_BIN:-/tmp/peers/httparena}
for c in perf curl; do command -v $c >/dev/null || { echo "needs $c" >&2; exit 2; }; done
if [ "$WORKLOAD" = json ]; then
  command -v wrk >/dev/null || { echo "needs wrk" >&2; exit 2; }
elif [ "$WORKLOAD" != json-fixed ]; then
  [ -x "$ARENA_BIN/gcannon" ] || { echo "needs $ARENA_BIN/gcannon (bench/peers/arena/README.md)" >&2; exit 2; }
fi
mkdir -p "$OUT/raw"
(cd "$ROOT" && RUSTFLAGS="-C target-cpu=native" cargo build -q --profile bench-bin &&
  RUSTFLAGS="-C target-cpu=native" cargo build -q --profile bench-bin -p twelve-engine --example httparena)
BIN=$ROOT/target/bench-bin/twelve
ARENA=$ROOT/target/bench-bin/examples/httparena
# CPU ticks (utime + stime) of every process holding the listener on PORT.
srv_ticks() {
  local p t=0
  for p in $(ss -Hltnp "sport = :$1" | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u); do
    t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat")))
  done
  echo "$t"
}
HDRS=(-H 'Host: localhost' -H 'Accept: application/json,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7' -H 'Connection: keep-alive')
SRV=""
cleanup() {
  "$ROOT/bench/cpu-quota.sh" off "$PORT" 8086 >/dev/null 2>&1 || true
  if [ -n "$SRV" ] && kill "$SRV" 2>/dev/null; then wait "$SRV" 2>/dev/null || true; fi
}
trap cleanup EXIT

{
  case $WORKLOAD in
    json) echo "# Where a capped server's CPU goes: keep-alive json, wrk -c$CONNS" ;;
    pipelined) echo "# Where a capped server's CPU goes: HttpArena pipelined, gcannon -c$CONNS -p 16" ;;
    baseline) echo "# Where a capped server's CPU goes: HttpArena baseline, gcannon -c$CONNS -p 1" ;;
    json-fixed) echo "# Where a server's CPU goes at a fixed rate: json, twelve bench -R $RATE -c$CONNS" ;;
    baseline-fixed) echo "# Where a server's CPU goes at a fixed rate: GET /baseline11, twelve bench -R $RATE -c$CONNS" ;;
  esac
  echo
  echo "- date: $(date -u +%FT%TZ); kernel $(uname -r); $(nproc) CPUs"
  echo "- twelve: $("$BIN" --version | head -1); tree $(cd "$ROOT" && git describe --always --dirty --abbrev=12)"
  echo "- command: \`${RATE:+RATE=$RATE }WORKLOAD=$WORKLOAD SERVERS=\"$SERVERS\" CONNS=$CONNS DURATION=$DURATION SAMPLE=$SAMPLE FREQ=$FREQ bench/kernel-profile.sh\`"
  if [[ $WORKLOAD == *-fixed ]]; then
    echo "- each server alone on CPU 0, uncapped; the client (one thread) on CPU 1;"
  else
    echo "- each server alone on CPU 0, capped at 50% of a core; the client (one thread) on CPU 1;"
  fi
  echo "  \`perf record -F $FREQ -g -p PID\` for ${SAMPLE} s from the 3rd second of a ${DURATION} s run"
} > "$OUT/README.md"

for name in $SERVERS; do
  case $name:${WORKLOAD%-fixed} in
    twelve:json) taskset -c 0 "$BIN" serve --listen "127.0.0.1:$PORT" --cpus 0 > "$OUT/raw/$name.log" 2>&1 & port=$PORT ;;
    twelve-uring:json) taskset -c 0 "$BIN" serve --listen "127.0.0.1:$PORT" --cpus 0 --io uring > "$OUT/raw/$name.log" 2>&1 & port=$PORT ;;
    libreactor:json) taskset -c 0 "$LIBREACTOR_BIN" > "$OUT/raw/$name.log" 2>&1 & port=8086 ;;
    # The httparena example picks its backend from TWELVE_IO, one worker per CPU of its mask.
    twelve:pipelined | twelve:baseline) taskset -c 0 "$ARENA" "127.0.0.1:$PORT" > "$OUT/raw/$name.log" 2>&1 & port=$PORT ;;
    twelve-uring:pipelined | twelve-uring:baseline) TWELVE_IO=uring taskset -c 0 "$ARENA" "127.0.0.1:$PORT" > "$OUT/raw/$name.log" 2>&1 & port=$PORT ;;
    # One reactor thread (argv[1]) beside ringzero's acceptor; the others size themselves from
    # the affinity mask (bench/peers/arena/README.md).
    ringzero:pipelined | ringzero:baseline) PORT=$PORT taskset -c 0 "$ARENA_BIN/ringzero" 1 > "$OUT/raw/$name.log" 2>&1 & port=$PORT ;;
    libreactorng:pipelined | rust-epoll:pipelined | libreactorng:baseline | rust-epoll:baseline)
      PORT=$PORT taskset -c 0 "$ARENA_BIN/$name" > "$OUT/raw/$name.log" 2>&1 & port=$PORT ;;
    *) echo "unknown server $name for WORKLOAD=$WORKLOAD" >&2; exit 2 ;;
  esac
  SRV=$!
  for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$port$PATH_" && break; sleep 0.2; done
  [[ $WORKLOAD == *-fixed ]] || "$ROOT/bench/cpu-quota.sh" 50 "$port" > /dev/null
  t0=$(srv_ticks "$port")
  if [[ $WORKLOAD == *-fixed ]]; then
    # The open model's uniform arrivals, as bench/peers.sh's fixed section offers them.
    target=/json
    [ "$WORKLOAD" = baseline-fixed ] && target='/baseline11?a=13&b=42'
    timeout $((DURATION + 20)) taskset -c 1 "$BIN" bench "http://127.0.0.1:$port$target" -R "$RATE" \
      -c "$CONNS" -d "${DURATION}s" --warmup 0 --cpus 1 --json > "$OUT/raw/$name-client.txt" 2>&1 &
  elif [ "$WORKLOAD" = json ]; then
    timeout $((DURATION + 20)) taskset -c 1 wrk -t1 -c"$CONNS" -d"${DURATION}s" "${HDRS[@]}" \
      "http://127.0.0.1:$port/json" > "$OUT/raw/$name-client.txt" 2>&1 &
  elif [ "$WORKLOAD" = pipelined ]; then
    timeout $((DURATION + 20)) taskset -c 1 "$ARENA_BIN/gcannon" "http://127.0.0.1:$port/pipeline" \
      -c "$CONNS" -t 1 -d "${DURATION}s" -p 16 --json > "$OUT/raw/$name-client.txt" 2>&1 &
  else
    R=$ROOT/bench/peers/arena/requests
    timeout $((DURATION + 20)) taskset -c 1 "$ARENA_BIN/gcannon" "http://127.0.0.1:$port" \
      --raw "$R/get.raw,$R/post_cl.raw,$R/post_chunked.raw" -c "$CONNS" -t 1 -d "${DURATION}s" -p 1 \
      --json > "$OUT/raw/$name-client.txt" 2>&1 &
  fi
  WRK=$!
  sleep 3
  # Every process holding the listener: TechEmpower's libreactor forks its workers.
  pids=$(ss -Hltnp "sport = :$port" | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u | paste -sd,)
  timeout $((SAMPLE + 20)) perf record -q -F "$FREQ" -g -p "$pids" -o "$OUT/raw/$name.data" -- sleep "$SAMPLE" \
    > /dev/null 2>&1
  wait "$WRK" || true
  echo $(($(srv_ticks "$port") - t0)) > "$OUT/raw/$name-ticks.txt"
  "$ROOT/bench/cpu-quota.sh" off "$port" > /dev/null
  # Every process holding the listener, not only the one started: TechEmpower's libreactor
  # forks a worker that outlives its parent and, with SO_REUSEPORT, would share the port with
  # the next run's libreactor (it did, from 2026-11-26T05:56 until it was found at 07:30).
  for p in ${pids//,/ }; do kill "$p" 2>/dev/null || true; done
  kill "$SRV" 2>/dev/null; wait "$SRV" 2>/dev/null || true; SRV=""
  perf script -i "$OUT/raw/$name.data" -F ip,sym 2> /dev/null > "$OUT/raw/$name.stacks"
  rm -f "$OUT/raw/$name.data"
done

# shellcheck disable=SC2086 # one argument per server name
python3 - "$OUT" $SERVERS > "$OUT/summary.md" <<'PY'
import json, os, re, sys
out, names = sys.argv[1], sys.argv[2:]
CLASSES = ['user', 'wake client', 'loopback rx', 'send', 'recv', 'epoll', 'io_uring', 'sched',
           'entry', 'other kernel']
RULES = [
    ('wake client', lambda s: 'sock_def_readable' in s),
    ('loopback rx', lambda s: any(f in ('tcp_v4_rcv', 'process_backlog', '__netif_receive_skb',
                                        'net_rx_action', '__netif_receive_skb_one_core') for f in s)),
    ('send', lambda s: any(f.startswith(('tcp_sendmsg', 'do_sendfile', 'io_send', '__sys_sendto',
                                         'sock_sendmsg')) for f in s)),
    ('recv', lambda s: any(f.startswith(('tcp_recvmsg', 'io_recv', '__sys_recvfrom', 'sock_recvmsg')) for f in s)),
    ('epoll', lambda s: any(f.startswith(('do_epoll_wait', 'ep_', '__x64_sys_epoll')) for f in s)),
    ('io_uring', lambda s: any(f.startswith(('io_uring', '__do_sys_io_uring', 'io_')) for f in s)),
    ('sched', lambda s: any(f in ('schedule', '__schedule', 'finish_task_switch.isra.0',
                                  'finish_task_switch') for f in s)),
    ('entry', lambda s: any(f.startswith(('entry_SYSCALL', 'syscall_exit', 'do_syscall_64')) for f in s)
                        and len(s) <= 3),
]
def samples(path):
    stack = []
    for line in open(path):
        line = line.strip()
        if not line:
            if stack:
                yield stack
            stack = []
            continue
        parts = line.split(None, 1)
        if len(parts) == 2:
            stack.append((parts[0], parts[1].split('+')[0]))
    if stack:
        yield stack
def classify(stack):
    kernel = [sym for ip, sym in stack if ip.startswith('ffffffff')]
    leaf_ip = stack[0][0]
    if not leaf_ip.startswith('ffffffff'):
        return 'user'
    for cls, rule in RULES:
        if rule(kernel):
            return cls
    return 'other kernel'
rows = {}
for n in names:
    counts = dict.fromkeys(CLASSES, 0)
    for st in samples(f"{out}/raw/{n}.stacks"):
        counts[classify(st)] += 1
    rows[n] = counts
print('| class | ' + ' | '.join(names) + ' |')
print('|---|' + '---|' * len(names))
for c in CLASSES:
    cells = []
    for n in names:
        total = sum(rows[n].values()) or 1
        cells.append(f"{100 * rows[n][c] / total:.1f}%")
    print(f"| {c} | " + ' | '.join(cells) + ' |')
print('| samples | ' + ' | '.join(str(sum(rows[n].values())) for n in names) + ' |')
HZ = os.sysconf('SC_CLK_TCK')
def requests(n):
    t = open(f"{out}/raw/{n}-client.txt").read()
    m = re.search(r'(\d+) requests in', t)  # wrk
    if m:
        return int(m.group(1))
    d = json.JSONDecoder().raw_decode(t, t.index('{'))[0]
    if 'status' in d:  # gcannon --json: 2xx answers
        return int(d['status']['2xx'])
    return int(d['requests'])  # twelve bench --json
per_req = {}
for n in names:
    ticks = int(open(f"{out}/raw/{n}-ticks.txt").read())
    reqs = requests(n)
    per_req[n] = ticks / HZ * 1e6 / reqs if reqs else float('nan')
    print(f"\n{n}: {reqs} requests, server CPU {ticks / HZ:.2f} s, {per_req[n]:.3f} µs a request.", end='')
print("\n\nServer CPU time per request by class (µs): the class's share of the samples times the "
      "server's CPU time over the client's whole run per request the client counted.\n")
print('| class | ' + ' | '.join(names) + ' |')
print('|---|' + '---|' * len(names))
for c in CLASSES + ['kernel (all but user)', 'total']:
    cells = []
    for n in names:
        total = sum(rows[n].values()) or 1
        k = (total - rows[n]['user'] if c.startswith('kernel') else
             total if c == 'total' else rows[n][c])
        cells.append(f"{per_req[n] * k / total:.3f}")
    print(f"| {c} | " + ' | '.join(cells) + ' |')
print("\nShares of the server's samples (its process, every thread); classes as in "
      "bench/kernel-profile.sh's header. The client's wake-up and the loopback receive path are "
      "the client's side of the connection, paid by the server's send on loopback.")
PY
# The stacks stay with the run, compressed (a few MB each as text).
gzip -9f "$OUT"/raw/*.stacks
cat "$OUT/summary.md"

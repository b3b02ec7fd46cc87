#!/usr/bin/env bash
# bench/kernel-profile.sh - where a capped server's CPU goes under keep-alive json load (issue 13:
# "perf profiles of the capped server on both backends, with the share that is the client's
# wake-up the server pays for on loopback"). Each server runs alone, pinned to CPU 0 and capped
# at 50% of a core (../shared/bench/cpu-quota.sh), wrk -t1 -c$CONNS on CPU 1 with TechEmpower's
# json headers; `perf record -g` samples the server's process for the middle $SAMPLE seconds.
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
# Env:   SERVERS="twelve twelve-uring libreactor"  CONNS=256  DURATION=14  SAMPLE=8  FREQ=2999
#        LIBREACTOR_BIN=/tmp/peers/libreactor-8086/libreactor  SHARED=../shared  PORT=8090
# Needs root, perf (Debian linux-perf), wrk, curl, cargo. Stops what it starts by PID.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SHARED=${SHARED:-$ROOT/../shared}/bench
OUT=${1:-$ROOT/bench/runs/$(date +%F)-kernel-profile}
SERVERS=${SERVERS:-twelve twelve-uring libreactor}
CONNS=${CONNS:-256}; DURATION=${DURATION:-14}; SAMPLE=${SAMPLE:-8}; FREQ=${FREQ:-2999}
PORT=${PORT:-8090}
LIBREACTOR_BIN=${LIBREACTOR_BIN:-/tmp/peers/libreactor-8086/libreactor}
for c in perf wrk curl; do command -v $c >/dev/null || { echo "needs $c" >&2; exit 2; }; done
mkdir -p "$OUT/raw"
(cd "$ROOT" && RUSTFLAGS="-C target-cpu=native" cargo build -q --profile bench-bin)
BIN=$ROOT/target/bench-bin/twelve
HDRS=(-H 'Host: localhost' -H 'Accept: application/json,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7' -H 'Connection: keep-alive')
SRV=""
cleanup() {
  "$SHARED/cpu-quota.sh" off "$PORT" 8086 >/dev/null 2>&1 || true
  if [ -n "$SRV" ] && kill "$SRV" 2>/dev/null; then wait "$SRV" 2>/dev/null || true; fi
}
trap cleanup EXIT

{
  echo "# Where a capped server's CPU goes: keep-alive json, wrk -c$CONNS"
  echo
  echo "- date: $(date -u +%FT%TZ); kernel $(uname -r); $(nproc) CPUs"
  echo "- twelve: $("$BIN" --version | head -1); tree $(cd "$ROOT" && git describe --always --dirty --abbrev=12)"
  echo "- command: \`SERVERS=\"$SERVERS\" CONNS=$CONNS DURATION=$DURATION SAMPLE=$SAMPLE FREQ=$FREQ bench/kernel-profile.sh\`"
  echo "- each server alone on CPU 0, capped at 50% of a core; wrk -t1 on CPU 1;"
  echo "  \`perf record -F $FREQ -g -p PID\` for ${SAMPLE} s from the 3rd second of a ${DURATION} s run"
} > "$OUT/README.md"

for name in $SERVERS; do
  case $name in
    twelve) taskset -c 0 "$BIN" serve --listen "127.0.0.1:$PORT" --cpus 0 > "$OUT/raw/$name.log" 2>&1 & port=$PORT ;;
    twelve-uring) taskset -c 0 "$BIN" serve --listen "127.0.0.1:$PORT" --cpus 0 --io uring > "$OUT/raw/$name.log" 2>&1 & port=$PORT ;;
    libreactor) taskset -c 0 "$LIBREACTOR_BIN" > "$OUT/raw/$name.log" 2>&1 & port=8086 ;;
    *) echo "unknown server $name" >&2; exit 2 ;;
  esac
  SRV=$!
  for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$port/json" && break; sleep 0.2; done
  "$SHARED/cpu-quota.sh" 50 "$port" > /dev/null
  timeout $((DURATION + 20)) taskset -c 1 wrk -t1 -c"$CONNS" -d"${DURATION}s" "${HDRS[@]}" \
    "http://127.0.0.1:$port/json" > "$OUT/raw/$name-wrk.txt" 2>&1 &
  WRK=$!
  sleep 3
  # Every process holding the listener: TechEmpower's libreactor forks its workers.
  pids=$(ss -Hltnp "sport = :$port" | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u | paste -sd,)
  timeout $((SAMPLE + 20)) perf record -q -F "$FREQ" -g -p "$pids" -o "$OUT/raw/$name.data" -- sleep "$SAMPLE" \
    > /dev/null 2>&1
  wait "$WRK"
  "$SHARED/cpu-quota.sh" off "$port" > /dev/null
  kill "$SRV"; wait "$SRV" 2>/dev/null || true; SRV=""
  perf script -i "$OUT/raw/$name.data" -F ip,sym 2> /dev/null > "$OUT/raw/$name.stacks"
  rm -f "$OUT/raw/$name.data"
done

# shellcheck disable=SC2086 # one argument per server name
python3 - "$OUT" $SERVERS > "$OUT/summary.md" <<'PY'
import re, sys
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
for n in names:
    wrk = open(f"{out}/raw/{n}-wrk.txt").read()
    m = re.search(r'Requests/sec:\s+([\d.]+)', wrk)
    print(f"\n{n}: wrk {m.group(1) if m else '?'} req/s over the whole run.", end='')
print("\n\nShares of the server's samples (its process, every thread); classes as in "
      "bench/kernel-profile.sh's header. The client's wake-up and the loopback receive path are "
      "the client's side of the connection, paid by the server's send on loopback.")
PY
cat "$OUT/summary.md"

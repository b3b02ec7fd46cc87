#!/usr/bin/env bash
# bench/fixed-cost.sh - issue 35's fixed-rate cost: the server's CPU per request at a fixed offered rate over many
# connections (HttpArena's latency-1m/latency-10k idea), where a server spends its life. twelve bench's open model
# (-R, uniform) on CPU 1 with -c CONNS, the servers on CPU 0 uncapped, one worker each, rounds interleaved across the
# servers (A B C A B C ...) at each rate, medians quoted.
#
# Servers (a pair per kind of work, so that twelve serve and the httparena example are compared on the same work):
#   serve          twelve serve --cpus 0, GET /json (TechEmpower's json)
#   serve-uring    the same with --io uring
#   arena          twelve-engine's httparena example, GET /baseline11?a=13&b=42 (HttpArena's baseline GET)
#   arena-uring    the same with TWELVE_IO=uring
#   serve-plain    twelve serve, GET /plaintext        and   arena-plain   the example, GET /pipeline
#                  (the same work on both: a 13 or 2 byte text/plain body)
#   libreactor     TechEmpower's libreactor (LIBREACTOR_BIN), GET /json           } when built
#   rust-epoll, libreactorng  HttpArena's engines (ARENA_BIN), GET /baseline11    } (bench/peers/README.md)
#
#   serve-nap      twelve serve --coalesce NAP (opt-in: fewer wake-ups per request for up to NAP more latency)
#   serve-base, serve-uring-base  twelve serve (epoll, io_uring) of another build, BASE_BIN (added when set): an
#                  A/B of two builds interleaved in one run
#
# Scheduling (SCHED=other, the default: the kernel's normal policy, as servers run in production).
# SCHED=fifo runs every server and the client under SCHED_FIFO priority 1 (chrt), for a host busy
# with other work, where a woken server or client otherwise waits behind a CPU-bound task for up
# to a tick (the server then finds several requests per wake-up and looks cheaper, and the client
# falls behind its schedule). It changes what is measured and starves other work on CPU 0, so a
# record compares servers under one policy and says which. RT throttling
# (kernel.sched_rt_runtime_us) still bounds them. The client is one worker on CPU 1
# (CLIENT_THREADS).
#
# Each run: the server's CPU time from the schedstat of every thread of every process holding the listener (ns), the
# server's syscalls, epoll_wait/io_uring_enter calls and context switches from `perf stat` on its tracepoints over
# the measured window, the requests twelve bench counted, and whether the rate held (achieved / offered).
#
# Usage: bench/fixed-cost.sh [OUTDIR]    (default bench/runs/<date>-fixed-cost)
# Env:   RATES="10000 50000" CONNS=1024 ROUNDS=3 DURATION=10s WARMUP=2s SCHED=other CLIENT_THREADS=1 NAP=200us
#        SERVERS="serve serve-uring arena arena-uring serve-plain arena-plain" (peers added when their binaries exist)
#        LIBREACTOR_BIN=/tmp/peers/libreactor-8086/libreactor  ARENA_BIN=/tmp/peers/httparena
#        BASE_BIN=/path/to/twelve (another build of twelve, bench-bin profile: adds serve-base and serve-uring-base)
#        PORT_OFFSET=0 (added to every port but libreactor's, which is built in: two runs at once need different
#        offsets, and a port already listened on stops the run, since SO_REUSEPORT would let both runs' servers
#        share it and each measure a mix; set LIBREACTOR_BIN= to leave libreactor out while another run has 8086)
# Writes OUTDIR/README.md, raw/ (each bench report, perf stat output, logs), fixed.tsv and summary.md. Needs root
# (perf's tracepoints), Debian's linux-perf, cargo. Every process it starts is stopped by PID on exit.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/bench/runs/$(date +%F)-fixed-cost}
RATES=${RATES:-10000 50000}; CONNS=${CONNS:-1024}; ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}; WARMUP=${WARMUP:-2s}
SERVERS=${SERVERS:-serve serve-uring arena arena-uring serve-plain arena-plain}
SCHED=${SCHED:-other}; CLIENT_THREADS=${CLIENT_THREADS:-1}; NAP=${NAP:-200us}; PORT_OFFSET=${PORT_OFFSET:-0}
case $SCHED in
  fifo) RUN=(chrt -f 1) ;;
  other) RUN=() ;;
  *) echo "fixed-cost.sh: SCHED=$SCHED: expected fifo or other" >&2; exit 2 ;;
esac
LIBREACTOR_BIN=${LIBREACTOR_BIN:-/tmp/peers/libreactor-8086/libreactor}
ARENA_BIN=${ARENA_BIN:-/tmp/peers/httparena}
mkdir -p "$OUT/raw"
TREE=$(cd "$ROOT" && git describe --always --dirty --abbrev=12)
(cd "$ROOT" && RUSTFLAGS="-C target-cpu=native" cargo build -q --profile bench-bin -p twelve --bin twelve \
  && RUSTFLAGS="-C target-cpu=native" cargo build -q --profile bench-bin -p twelve-engine --example httparena)
TWELVE=$ROOT/target/bench-bin/twelve
EXAMPLE=$ROOT/target/bench-bin/examples/httparena
BASE_BIN=${BASE_BIN:-}
if [ -n "$BASE_BIN" ]; then
  [ -x "$BASE_BIN" ] || { echo "fixed-cost.sh: BASE_BIN=$BASE_BIN is not an executable" >&2; exit 2; }
  SERVERS="$SERVERS serve-base serve-uring-base"
fi
[ -x "$LIBREACTOR_BIN" ] && SERVERS="$SERVERS libreactor"
[ -x "$ARENA_BIN/rust-epoll" ] && SERVERS="$SERVERS rust-epoll"
[ -x "$ARENA_BIN/libreactorng" ] && SERVERS="$SERVERS libreactorng"

PIDS=()
stop_all() {
  local p
  for p in ${PIDS[@]+"${PIDS[@]}"}; do pkill -P "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true; done
  for p in ${PIDS[@]+"${PIDS[@]}"}; do wait "$p" 2>/dev/null || true; done
  PIDS=()
}
trap stop_all EXIT
ulimit -n "$(ulimit -Hn)"

# name -> "port path"
declare -A AT=(
  [serve]="8111 /json" [serve-uring]="8112 /json" [arena]="8113 /baseline11?a=13&b=42"
  [arena-uring]="8114 /baseline11?a=13&b=42" [serve-plain]="8111 /plaintext" [arena-plain]="8113 /pipeline"
  [serve-nap]="8115 /json" [serve-base]="8116 /json" [serve-uring-base]="8117 /json" [libreactor]="8086 /json" [rust-epoll]="8091 /baseline11?a=13&b=42" [libreactorng]="8093 /baseline11?a=13&b=42"
)
for k in "${!AT[@]}"; do
  [ "$k" = libreactor ] || AT[$k]="$((${AT[$k]%% *} + PORT_OFFSET)) ${AT[$k]#* }"
done
started=()
start() { # name: starts the process behind it once
  local name=$1 proc
  case $name in serve-plain) proc=serve ;; arena-plain) proc=arena ;; *) proc=$name ;; esac
  [[ " ${started[*]-} " == *" $proc "* ]] && return 0
  local port=${AT[$proc]%% *}
  if [ -n "$(ss -Hltn "sport = :$port")" ]; then
    echo "fixed-cost.sh: port $port ($proc) is already listened on (another run?); see PORT_OFFSET" >&2; exit 1
  fi
  case $proc in
    serve) "${RUN[@]}" taskset -c 0 "$TWELVE" serve --listen "127.0.0.1:$port" --cpus 0 \
      > "$OUT/raw/$proc.log" 2>&1 & ;;
    serve-uring) "${RUN[@]}" taskset -c 0 "$TWELVE" serve --listen "127.0.0.1:$port" --cpus 0 --io uring \
      > "$OUT/raw/$proc.log" 2>&1 & ;;
    serve-nap) "${RUN[@]}" taskset -c 0 "$TWELVE" serve --listen "127.0.0.1:$port" --cpus 0 --coalesce "$NAP" \
      > "$OUT/raw/$proc.log" 2>&1 & ;;
    serve-base) "${RUN[@]}" taskset -c 0 "$BASE_BIN" serve --listen "127.0.0.1:$port" --cpus 0 \
      > "$OUT/raw/$proc.log" 2>&1 & ;;
    serve-uring-base) "${RUN[@]}" taskset -c 0 "$BASE_BIN" serve --listen "127.0.0.1:$port" --cpus 0 --io uring \
      > "$OUT/raw/$proc.log" 2>&1 & ;;
    arena) "${RUN[@]}" taskset -c 0 "$EXAMPLE" "127.0.0.1:$port" > "$OUT/raw/$proc.log" 2>&1 & ;;
    arena-uring) TWELVE_IO=uring "${RUN[@]}" taskset -c 0 "$EXAMPLE" "127.0.0.1:$port" \
      > "$OUT/raw/$proc.log" 2>&1 & ;;
    libreactor) "${RUN[@]}" taskset -c 0 "$LIBREACTOR_BIN" > "$OUT/raw/$proc.log" 2>&1 & ;;
    rust-epoll|libreactorng) PORT=$port "${RUN[@]}" taskset -c 0 "$ARENA_BIN/$proc" \
      > "$OUT/raw/$proc.log" 2>&1 & ;;
  esac
  PIDS+=($!)
  started+=("$proc")
  for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$port${AT[$proc]#* }" && return 0; sleep 0.1; done
  echo "fixed-cost.sh: $name does not answer on $port" >&2; exit 1
}

pids_on_port() { ss -Hltnp "sport = :$1" | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u; }
cpu_ns() { # port -> ns on CPU of every thread of every process holding the listener
  local p t=0 ns
  for p in $(pids_on_port "$1"); do
    for ns in $(cat /proc/"$p"/task/*/schedstat 2>/dev/null | cut -d' ' -f1); do t=$((t + ns)); done
  done
  echo "$t"
}

for name in $SERVERS; do start "$name"; done
EVENTS=raw_syscalls:sys_enter,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_io_uring_enter,sched:sched_switch
DUR_S=${DURATION%s}
printf 'rate\tserver\tround\trequests\tachieved_rps\tcpu_ns\tcpu_us_per_req\tsyscalls_per_req\twaits_per_req\tswitches_per_req\tp50_us\tp99_us\n' \
  > "$OUT/fixed.tsv"
for rate in $RATES; do
  for ((r = 1; r <= ROUNDS; r++)); do
    for name in $SERVERS; do
      port=${AT[$name]%% *}; path=${AT[$name]#* }
      f=$OUT/raw/$rate-$name-$r
      pids=$(pids_on_port "$port" | paste -sd,)
      # perf counts the measured window only: it starts after the warm-up and stops with the load.
      timeout $((DUR_S + 60)) "${RUN[@]}" taskset -c 1 "$TWELVE" bench --cpus 1 -t "$CLIENT_THREADS" -R "$rate" \
        -c "$CONNS" -d "$DURATION" \
        --warmup "$WARMUP" --json "http://127.0.0.1:$port$path" > "$f.json" 2> "$f.log" &
      bench=$!
      sleep "${WARMUP%s}"
      c0=$(cpu_ns "$port")
      timeout $((DUR_S + 5)) perf stat -x, -e "$EVENTS" -p "$pids" -- sleep "$DUR_S" 2> "$f.perf" || true
      c1=$(cpu_ns "$port")
      if ! wait "$bench"; then
        # An unmeasured run (the server could not hold the rate, or too many requests failed):
        # a row without figures, and the rounds go on.
        printf '%s\t%s\t%d\tNA\tNA\tNA\tNA\tNA\tNA\tNA\tNA\tNA\n' "$rate" "$name" "$r" >> "$OUT/fixed.tsv"
        echo "fixed-cost.sh: bench against $name, round $r, unmeasured: $f.log" >&2
        continue
      fi
      python3 - "$f.json" "$f.perf" "$rate" "$name" "$r" $((c1 - c0)) >> "$OUT/fixed.tsv" <<'PY'
import csv, json, sys
rep, perf, rate, name, rnd, cpu_ns = sys.argv[1], sys.argv[2], int(sys.argv[3]), *sys.argv[4:]
d = json.load(open(rep))
n = d['requests']
# perf's window (DURATION) and bench's are the same length; requests in perf's window ~ rps x duration.
ev = {}
for row in csv.reader(open(perf)):
    if len(row) > 2 and row[0].replace('.', '').isdigit():
        ev[row[2]] = float(row[0])
served = d['rps'] * d['duration_s']
per = lambda k: ev.get(k, 0) / served
lat = d['latency']['corrected']
pct = lambda p: lat[p + '_us']
waits = per('syscalls:sys_enter_epoll_wait') + per('syscalls:sys_enter_io_uring_enter')
print(f"{rate}\t{name}\t{rnd}\t{n}\t{d['rps']:.0f}\t{cpu_ns}\t{int(cpu_ns) / 1000 / served:.2f}"
      f"\t{per('raw_syscalls:sys_enter'):.2f}\t{waits:.2f}\t{per('sched:sched_switch'):.2f}\t{pct('p50'):.0f}\t{pct('p99'):.0f}")
PY
      tail -n 1 "$OUT/fixed.tsv" >&2
    done
  done
done
stop_all

{
  echo "# Server CPU per request at a fixed offered rate"
  echo
  echo "- date: $(date -u +%FT%TZ)"
  echo "- twelve: $("$TWELVE" --version | head -1)"
  echo "- tree: $TREE (at the start)"
  echo "- kernel: $(uname -r)"
  echo "- cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) online"
  [ -n "$BASE_BIN" ] && echo "- serve-base, serve-uring-base: $("$BASE_BIN" --version | head -1) ($BASE_BIN)"
  echo "- pinning: every server on CPU 0, one worker, uncapped; twelve bench on CPU 1 (open model, uniform,"
  echo "  $CLIENT_THREADS worker); scheduling: $SCHED (fifo: server and client under SCHED_FIFO priority 1)"
  echo "- command: \`RATES=\"$RATES\" CONNS=$CONNS ROUNDS=$ROUNDS DURATION=$DURATION WARMUP=$WARMUP SCHED=$SCHED" \
    "CLIENT_THREADS=$CLIENT_THREADS NAP=$NAP${BASE_BIN:+ BASE_BIN=$BASE_BIN} PORT_OFFSET=$PORT_OFFSET" \
    "SERVERS=\"$SERVERS\" bench/fixed-cost.sh\`"
  echo "- server CPU: schedstat of every thread of the listener's processes over the measured window;"
  echo "  syscalls, waits (epoll_wait + io_uring_enter) and context switches: perf stat on tracepoints, per"
  echo "  request served in the window"
} > "$OUT/README.md"
python3 - "$OUT/fixed.tsv" > "$OUT/summary.md" <<'PY'
import csv, statistics as st, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter='\t'))
by = {}
for r in rows:
    by.setdefault((int(r['rate']), r['server']), []).append(r)
print("| rate | server | runs measured | achieved ÷ offered (min) | server CPU µs/req median (min-max) | syscalls/req "
      "| waits/req | switches/req | p50 / p99 µs |")
print("|---|---|---|---|---|---|---|---|---|")
for (rate, s), all_rs in sorted(by.items()):
    rs = [r for r in all_rs if r['requests'] != 'NA']
    if not rs:
        print(f"| {rate:,} | {s} | 0 of {len(all_rs)} | unmeasured | | | | | |")
        continue
    cpu = [float(r['cpu_us_per_req']) for r in rs]
    med = lambda k: st.median(float(r[k]) for r in rs)
    ach = min(float(r['achieved_rps']) for r in rs) / rate
    print(f"| {rate:,} | {s} | {len(rs)} of {len(all_rs)} | {ach:.3f} | {st.median(cpu):.2f} ({min(cpu):.2f}-{max(cpu):.2f}) "
          f"| {med('syscalls_per_req'):.2f} | {med('waits_per_req'):.2f} | {med('switches_per_req'):.2f} "
          f"| {med('p50_us'):.0f} / {med('p99_us'):.0f} |")
PY
cat "$OUT/summary.md"

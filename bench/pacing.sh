#!/usr/bin/env bash
# bench/pacing.sh - issue 33's proof: does twelve bench's pacing (naps only when the client is
# the limit; the open model's --slack) measure what independent clients measure, and what does
# it cost? Every client is pinned to CPU 1 with one thread, every server to CPU 0 with one
# worker; rounds interleaved (bench/order.sh: the list one way, then back, rotated by one every
# two rounds), medians quoted.
#
#   capped:  nginx capped at 50% of CPU 0 (cpu-quota.sh), GET /json at -c64 and -c256:
#            the req/s each client measured (twelve should be within 2% of wrk and gcannon,
#            not above them: its naps must not batch requests for the server), and whether
#            twelve napped.
#            Beside each run, what the server did for it (perf stat of the server's threads:
#            CPU, context switches, wake-ups it issued, waits it made; the cgroup's throttled
#            periods) and the client's own context switches: who batches, who wakes whom.
#   bound:   twelve serve uncapped on CPU 0, GET /json at -c64, closed model: each client's CPU
#            per request (wrk, gcannon, twelve; the target: twelve <= 0.85 x wrk, < gcannon).
#   open:    twelve serve uncapped on CPU 0, the open model at RATES req/s, -c64: each client's
#            CPU per request (user+sys of the client process over the responses it counted),
#            twelve's schedule lag (p99 and max, from its self-check) and the server's CPU per
#            request beside each (its threads' schedstat over the run). Clients: twelve (the
#            default --slack), twelve_1ms (--slack 1ms, wrk2's timer granularity), wrk2 -R,
#            oha -q. After each round, the machine's own timer (bench/tools/timer-probe.py:
#            how late a thread on CPU 1 with 1 ns of timer slack wakes from sleeps of the gap
#            between requests) and the lag a zero-cost sender on CPU 1 would have had
#            (bench/tools/stall-probe.py: slots that fall in gaps a spinning thread did not
#            run), the floor under twelve's schedule lag.
#
# Usage: bench/pacing.sh [OUTDIR]        (default bench/runs/<date>-pacing)
# Env:   ROUNDS=4 (even: every pair in both orders) DURATION=5 (seconds per run; DURATION_S too)
#        RATES="1000 10000 40000" SECTIONS="capped bound open" CAPPED_CONNS="64 256"
#        PORT=8190 SERVER_STAT=1 (0: no perf)
#        CAPPED_CLIENTS="wrk gcannon twelve twelve_epoll" (twelve_epoll: `--io epoll`)
#        BIN (default: target/bench-bin/twelve, built here)  WRK2=/tmp/pacing-peers/wrk2/wrk
#        GCANNON=/tmp/pacing-peers/gcannon/gcannon  OHA=/tmp/pacing-peers/cargo-root/bin/oha
#        TWELVE_MORE="base=/path/twelve ..." (other builds of twelve bench, for A/B: each runs as
#        client twelve@NAME beside twelve, interleaved, in the bound and open sections with the
#        default pacing; the summary gives twelve's CPU per request over each)
# Peers are built outside the repository: wrk2 (github giltene/wrk2, `make`), gcannon (github
# MDA2AV/gcannon, `make` against liburing >= 2.4: Debian 12's 2.3 lacks io_uring_free_buf_ring,
# so liburing is built from github axboe/liburing first), oha (`cargo install oha --locked
# --root DIR`). Needs root (the cgroup cap), Debian's wrk and nginx, GNU time, perf, python3.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/bench/runs/$(date +%F)-pacing}
ROUNDS=${ROUNDS:-4}; DURATION_S=${DURATION:-${DURATION_S:-5}}; RATES=${RATES:-1000 10000 40000}
SECTIONS=${SECTIONS:-capped bound open}; PORT=${PORT:-8190}; CAPPED_CONNS=${CAPPED_CONNS:-64 256}
SERVER_STAT=${SERVER_STAT:-1}; NGX_PORT=${NGX_PORT:-8191}
read -r -a CAPPED_CLIENTS <<< "${CAPPED_CLIENTS:-wrk gcannon twelve twelve_epoll}"
# A cgroup and an nginx of this script's own, so that other scripts run at once (start-peers.sh's
# nginx on 8081, cpu-quota.sh's default group) neither meet nor move them.
export QUOTA_CGROUP=${QUOTA_CGROUP:-pacing}
NGX_DIR=/tmp/pacing-nginx-$$
WRK2=${WRK2:-/tmp/pacing-peers/wrk2/wrk}
GCANNON=${GCANNON:-/tmp/pacing-peers/gcannon/gcannon}
OHA=${OHA:-/tmp/pacing-peers/cargo-root/bin/oha}
if [ -z "${BIN:-}" ]; then
  (cd "$ROOT" && cargo build -q --profile bench-bin --bin twelve)
  BIN=$ROOT/target/bench-bin/twelve
fi
for p in "$WRK2" "$GCANNON" /usr/bin/time $([ "$SERVER_STAT" = 0 ] || echo /usr/bin/perf); do
  [ -x "$p" ] || { echo "missing $p (see the header of bench/pacing.sh)" >&2; exit 2; }
done
# oha takes long to build; without it the open section runs the others and says so.
OPEN_CLIENTS=(twelve twelve_1ms wrk2 oha)
if [ ! -x "$OHA" ]; then
  echo "no oha at $OHA: the open section runs without it" >&2
  OPEN_CLIENTS=(twelve twelve_1ms wrk2)
fi
# Other builds of twelve bench, run as clients twelve@NAME (A/B in the same rounds).
MORE=()
declare -A MORE_BIN=()
for m in ${TWELVE_MORE:-}; do
  [ -x "${m#*=}" ] || { echo "TWELVE_MORE: no executable at ${m#*=}" >&2; exit 2; }
  MORE+=("twelve@${m%%=*}"); MORE_BIN["twelve@${m%%=*}"]=${m#*=}
done
OPEN_CLIENTS+=("${MORE[@]}")
mkdir -p "$OUT/raw"

SRV_PID=
NGX_PID=
stop_nginx() {
  "$ROOT/bench/cpu-quota.sh" off "$NGX_PORT" >/dev/null 2>&1 || true
  if [ -n "$NGX_PID" ] && kill "$NGX_PID" 2>/dev/null; then wait "$NGX_PID" 2>/dev/null || true; fi
  NGX_PID=
  rm -rf "$NGX_DIR"
}
stop_all() {
  perf_stop
  stop_nginx
  if [ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; then wait "$SRV_PID" 2>/dev/null || true; fi
}
trap stop_all EXIT
ulimit -n "$(ulimit -Hn)"
wait_up() { for _ in $(seq 50); do curl -sf "$1" >/dev/null && return 0; sleep 0.2; done; echo "no answer at $1" >&2; exit 2; }

# Every PID holding the listening socket of PORT (nginx: its master and its worker).
server_pids() { ss -Hltnp "sport = :$1" | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u; }
# CPU time of every thread of the processes listening on PORT, ns (schedstat's first field).
server_ns() {
  local pid
  for pid in $(server_pids "$1"); do cat /proc/"$pid"/task/*/schedstat; done | awk '{s += $1} END {print s}'
}
# The capped servers' throttled periods so far (cgroup v1 or v2 cpu.stat), 0 when uncapped.
throttled() {
  local f
  for f in "/sys/fs/cgroup/cpu/$QUOTA_CGROUP/cpu.stat" "/sys/fs/cgroup/$QUOTA_CGROUP/cpu.stat"; do
    [ -f "$f" ] && { awk '$1 == "nr_throttled" {print $2}' "$f"; return; }
  done
  echo 0
}
# What the server's threads did while a client ran: CPU, context switches, the wake-ups they
# issued (sched_wakeup fires in the waker's context: mostly the client's, woken by a response),
# and their waits for events (epoll or io_uring).
SERVER_EVENTS=task-clock,context-switches,sched:sched_wakeup,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_epoll_pwait2,syscalls:sys_enter_io_uring_enter
PERF_PID=
perf_start() { # PORT OUTFILE
  [ "$SERVER_STAT" = 0 ] && return 0
  perf stat -x, -e "$SERVER_EVENTS" -p "$(server_pids "$1" | paste -sd,)" -o "$2" &
  PERF_PID=$!
  sleep 0.2 # perf attaches before the client starts
}
perf_stop() {
  [ -n "$PERF_PID" ] || return 0
  kill -INT "$PERF_PID" 2>/dev/null || true
  wait "$PERF_PID" 2>/dev/null || true
  PERF_PID=
}
# One perf stat counter from FILE, 0 when absent (SERVER_STAT=0, an event this kernel lacks).
perf_count() { awk -F, -v e="$2" '$3 == e {n = $1} END {print (n == "" || n ~ /not/) ? 0 : n}' "$1" 2>/dev/null || echo 0; }

# run_CLIENT URL CONNS SECONDS RATE OUTFILE: one run on CPU 1 (RATE 0: closed model), under
# WRAP (GNU time: wall, user, sys, voluntary and involuntary context switches).
WRAP=()
run_wrk() { "${WRAP[@]}" taskset -c 1 timeout 120 wrk -t1 -c"$2" -d"$3s" --timeout 5s "$1" > "$5" 2>&1; }
run_gcannon() { "${WRAP[@]}" taskset -c 1 timeout 120 "$GCANNON" "$1" -c "$2" -t 1 -d "$3s" --json > "$5" 2>&1; }
run_wrk2() { "${WRAP[@]}" taskset -c 1 timeout 120 "$WRK2" -t1 -c"$2" -d"$3s" -R"$4" --latency "$1" > "$5" 2>&1; }
run_oha() {
  "${WRAP[@]}" taskset -c 1 timeout 120 "$OHA" --no-tui --output-format json -z "$3s" -c "$2" -q "$4" \
    --latency-correction "$1" > "$5" 2> "$5.err"
}
TWELVE=$BIN
run_twelve() { # the default engine (--io auto) and pacing, as a user runs it
  local rate=()
  [ "$4" -gt 0 ] && rate=(-R "$4")
  "${WRAP[@]}" timeout 120 "$TWELVE" bench "$1" --cpus 1 -t1 -c"$2" -d"$3s" --warmup 0 --timeout 5s "${rate[@]}" \
    --json "${EXTRA[@]}" > "$5" 2> "$5.err"
}
EXTRA=()
run_twelve_1ms() { EXTRA=(--slack 1ms); run_twelve "$@"; EXTRA=(); }
# The epoll engine named: a send per answer as it is read, as wrk sends; the default engine
# (io_uring where the kernel has it) submits a turn's sends together, as gcannon does.
run_twelve_epoll() { EXTRA=(--io epoll); run_twelve "$@"; EXTRA=(); }
# A TWELVE_MORE build (client twelve@NAME), run as twelve is.
run_more() { TWELVE=${MORE_BIN[$CLIENT]}; run_twelve "$@"; TWELVE=$BIN; }
# The responses a client counted.
count() {
  case $1 in
    wrk|wrk2) awk '/requests in/{print $1}' "$2" ;;
    gcannon) python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["responses"])' "$2" ;;
    oha) python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(d["statusCodeDistribution"].values()))' "$2" ;;
    twelve*) python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["requests"])' "$2" ;;
  esac
}
# The req/s a client reported over its own measured window (process start-up left out).
reported() {
  case $1 in
    wrk|wrk2) awk '/Requests\/sec/{print $2}' "$2" ;;
    gcannon|twelve*) python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rps"])' "$2" ;;
    oha) python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["requestsPerSec"])' "$2" ;;
  esac
}

{
  echo "# twelve bench's pacing against wrk, gcannon, wrk2 and oha"
  echo
  echo "- date: $(date -u +%FT%TZ); kernel $(uname -r); $(nproc) CPUs; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "- twelve: $("$BIN" --version | head -1)"
  for c in "${MORE[@]}"; do echo "- $c: $("${MORE_BIN[$c]}" --version | head -1) (TWELVE_MORE)"; done
  echo "- commit: $(cd "$ROOT" && git rev-parse --short=12 HEAD)"
  echo "- wrk $(dpkg-query -W -f '${Version}' wrk 2>/dev/null); wrk2 $(git -C "$(dirname "$WRK2")" rev-parse --short HEAD 2>/dev/null || echo '?'); gcannon $(git -C "$(dirname "$GCANNON")" rev-parse --short HEAD 2>/dev/null || echo '?'); $("$OHA" --version 2>/dev/null | head -1 || echo 'oha: not built')"
  echo "- open-model clients: ${OPEN_CLIENTS[*]}"
  echo "- command: \`ROUNDS=$ROUNDS DURATION=$DURATION_S RATES=\"$RATES\" SECTIONS=\"$SECTIONS\" CAPPED_CONNS=\"$CAPPED_CONNS\"${TWELVE_MORE:+ TWELVE_MORE=\"$TWELVE_MORE\"} bench/pacing.sh\`"
  echo "- every client: one thread on CPU 1, ${DURATION_S}s; servers on CPU 0 with one worker;"
  echo "  client CPU is user+sys of the client process (GNU time), server CPU its threads' schedstat"
  echo "- server events per run: $([ "$SERVER_STAT" = 0 ] && echo 'not recorded (SERVER_STAT=0)' || echo "perf stat -e $SERVER_EVENTS")"
  echo "- bound: twelve serve uncapped on CPU 0, GET /json, -c64, closed model"
  echo "- capped: nginx (bench/peers/nginx-tfb.conf, on port $NGX_PORT) capped at 50% of CPU 0, GET /json, closed model;"
  echo "  clients ${CAPPED_CLIENTS[*]} (twelve_epoll: \`--io epoll\`)"
  echo "- open: twelve serve uncapped on CPU 0, GET /json, -c64, the open model at each rate;"
  echo "  after each round, bench/tools/timer-probe.py on CPU 1 (the timer's own lateness, 1 ns of timer slack)"
  echo "  and bench/tools/stall-probe.py on CPU 1 (the schedule lag of a zero-cost sender: slots in gaps a spinning thread did not run)"
} > "$OUT/README.md"

TSV="$OUT/runs.tsv"
echo -e "section\tconns\trate\tclient\tround\tresponses\treported_rps\twall_s\tclient_cpu_s\tserver_cpu_s\tclient_vcs\tclient_ics\tserver_cs\tserver_wakeups\tserver_waits\tthrottled" > "$TSV"
one() { # SECTION CONNS RATE CLIENT ROUND URL PORT
  local f="$OUT/raw/$1-c$2-r$3-$4-$5" s0 s1 t0 t1 w u s vcs ics waits e
  perf_start "$7" "$f.perf"
  s0=$(server_ns "$7"); t0=$(throttled)
  WRAP=(/usr/bin/time -f '%e %U %S %w %c' -o "$f.time")
  local run=run_$4
  [ -n "${MORE_BIN[$4]:-}" ] && run=run_more
  CLIENT=$4 "$run" "$6" "$2" "$DURATION_S" "$3" "$f" || echo "$4 exited $? (its output: $f)" >&2
  WRAP=()
  s1=$(server_ns "$7"); t1=$(throttled)
  perf_stop
  read -r w u s vcs ics < <(tail -1 "$f.time")
  waits=0
  for e in epoll_wait epoll_pwait epoll_pwait2 io_uring_enter; do
    waits=$((waits + $(perf_count "$f.perf" "syscalls:sys_enter_$e")))
  done
  echo -e "$1\t$2\t$3\t$4\t$5\t$(count "$4" "$f")\t$(reported "$4" "$f")\t$w\t$(awk -v u="$u" -v s="$s" 'BEGIN{print u + s}')\t$(awk -v a="$s0" -v b="$s1" 'BEGIN{print (b - a) / 1e9}')\t$vcs\t$ics\t$(perf_count "$f.perf" context-switches)\t$(perf_count "$f.perf" sched:sched_wakeup)\t$waits\t$((t1 - t0))" >> "$TSV"
}
# Round R's order (bench/order.sh).
. "$ROOT/bench/order.sh"
order() { round_order "$R" "$@"; }
on() { [[ " $SECTIONS " == *" $1 "* ]]; }

if on capped; then
  # bench/peers/nginx-tfb.conf (one worker) on this script's own port and directory.
  mkdir -p "$NGX_DIR"
  sed -e "s#/tmp/bench-nginx#$NGX_DIR#g" -e "s#127.0.0.1:8081#127.0.0.1:$NGX_PORT#" \
    "$ROOT/bench/peers/nginx-tfb.conf" > "$NGX_DIR/nginx.conf"
  taskset -c 0 nginx -p "$NGX_DIR" -e "$NGX_DIR/error.log" -c "$NGX_DIR/nginx.conf" > "$OUT/raw/nginx.log" 2>&1 &
  NGX_PID=$!
  wait_up "http://127.0.0.1:$NGX_PORT/json"
  "$ROOT/bench/cpu-quota.sh" 50 "$NGX_PORT" > "$OUT/raw/quota.log"
  for conns in $CAPPED_CONNS; do
    for ((R = 1; R <= ROUNDS; R++)); do
      for c in $(order "${CAPPED_CLIENTS[@]}"); do one capped "$conns" 0 "$c" "$R" "http://127.0.0.1:$NGX_PORT/json" "$NGX_PORT"; done
    done
  done
  stop_nginx
fi

if on bound || on open; then
  taskset -c 0 "$BIN" serve --listen "127.0.0.1:$PORT" --cpus 0 > "$OUT/raw/twelve-serve.log" 2>&1 &
  SRV_PID=$!
  wait_up "http://127.0.0.1:$PORT/json"
fi

if on bound; then
  for ((R = 1; R <= ROUNDS; R++)); do
    for c in $(order wrk gcannon twelve "${MORE[@]}"); do one bound 64 0 "$c" "$R" "http://127.0.0.1:$PORT/json" "$PORT"; done
  done
fi

if on open; then
  for rate in $RATES; do
    for ((R = 1; R <= ROUNDS; R++)); do
      for c in $(order "${OPEN_CLIENTS[@]}"); do one open 64 "$rate" "$c" "$R" "http://127.0.0.1:$PORT/json" "$PORT"; done
      # The machine's own timer in the same round: how late a thread on CPU 1 with the open
      # model's timer slack (1 ns) wakes from sleeps of the gap between requests.
      taskset -c 1 python3 "$ROOT/bench/tools/timer-probe.py" "$((1000000000 / rate))" "$DURATION_S" \
        > "$OUT/raw/open-c64-r$rate-timer-$R.json"
      # And the lag no client on CPU 1 can beat in this round: the slots of the same schedule
      # that fall in the gaps a spinning thread did not run (bench/tools/stall-probe.py).
      taskset -c 1 python3 "$ROOT/bench/tools/stall-probe.py" "$DURATION_S" "$rate" \
        > "$OUT/raw/open-c64-r$rate-stall-$R.json"
    done
  done
fi

python3 "$ROOT/bench/tools/pacing-summary.py" "$OUT" > "$OUT/summary.md"
cat "$OUT/summary.md"

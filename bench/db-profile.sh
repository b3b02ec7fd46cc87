#!/usr/bin/env bash
# bench/db-profile.sh - where a database server's CPU goes, per request: twelve serve --database
# and the TechEmpower peers of bench/db.sh, one at a time, each on CPU 0 capped at half of it,
# wrk and PostgreSQL on CPU 1 (as db.sh runs them). Per server and test: the server's CPU per
# request (utime + stime from /proc), its sendto/recvfrom/epoll_wait calls per request (perf
# stat tracepoints; `syscalls` counts every one), its context switches (`sched_switch`;
# `wakeups`, the voluntary ones from /proc: each a sleep and a wake-up; `invol_switches`),
# the packets its own context sends (`net_xmit`: data and ACKs, loopback), PostgreSQL's sends
# and reads per request, then a `perf record -g` of the server under the same load (report it with `perf report -i OUT/TEST-SERVER.perf --no-children
# --sort dso,sym`). Timing here is for the breakdown, not for ratios: db.sh interleaves.
#
# PERF_RECORD=0 leaves the recording out (the per-request table alone).
#
# Usage: DURATION_S=6 SERVERS="twelve xitca" TESTS="db fortunes updates" bench/db-profile.sh OUT
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:?usage: bench/db-profile.sh OUT}; D=${DURATION_S:-6}
SERVERS=${SERVERS:-twelve xitca}; TESTS=${TESTS:-db fortunes updates}
BIN=${TWELVE_BIN:-$ROOT/target/bench-bin/twelve}
XITCA=${XITCA_DB_BIN:-/tmp/peers/xitca-tfb/frameworks/Rust/xitca-web/target/release/xitca-web-barebone}
MAY=${MAY_DB_BIN:-/tmp/peers/may-tfb/frameworks/Rust/may-minihttp/target/release/may-minihttp}
PG=/tmp/bench-pg-profile; . "$ROOT/bench/pg.sh"
mkdir -p "$OUT"
declare -A PORT=([twelve]=8090 [xitca]=8085 [may]=8083)
PIDS=()
cleanup() {
  QUOTA_CGROUP=dbprofile "$ROOT/bench/cpu-quota.sh" off "${PORT[@]}" >/dev/null 2>&1 || true
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  stop_pg
}
trap cleanup EXIT
start_pg 5432
ulimit -n "$(ulimit -Hn)"
ports=()
for s in $SERVERS; do
  case $s in
    twelve) taskset -c 0 "$BIN" serve --listen 127.0.0.1:8090 --cpus 0 --no-metrics \
              --database "postgres://postgres@127.0.0.1:5432/postgres" > "$OUT/twelve.log" 2>&1 & ;;
    xitca) taskset -c 0 "$XITCA" > "$OUT/xitca.log" 2>&1 & ;;
    may) taskset -c 0 "$MAY" > "$OUT/may.log" 2>&1 & ;;
  esac
  PIDS+=($!); ports+=("${PORT[$s]}")
done
sleep 2
QUOTA_CGROUP=dbprofile "$ROOT/bench/cpu-quota.sh" 50 "${ports[@]}" > "$OUT/quota.txt"
pid_of() { ss -Hltnp "sport = :$1" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2; }
ticks() { awk '{print $12 + $13}' <(sed 's/.*) //' "/proc/$1/stat"); }
url() {
  local base="http://127.0.0.1:${PORT[$1]}"
  case $2 in
    db) echo "$base/db" ;; queries) echo "$base/queries?q=20" ;;
    fortunes) echo "$base/fortunes" ;; updates) echo "$base/updates?q=20" ;;
  esac
}
HZ=$(getconf CLK_TCK)
CALLS='raw_syscalls:sys_enter,syscalls:sys_enter_sendto,syscalls:sys_enter_recvfrom,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_io_uring_enter,sched:sched_switch,net:net_dev_xmit'
# The server's context switches, all its threads (voluntary: it slept, so each is one
# wake-up), from /proc.
switches() { cat /proc/"$1"/task/*/status | awk '/^voluntary_ctxt/{v += $2} /^nonvoluntary_ctxt/{n += $2} END{print v, n}'; }
echo -e "test\tserver\trequests\tsrv_cpu_us_per_req\tsyscalls\tsendto\trecvfrom\tepoll_wait\tio_uring_enter\tsched_switch\twakeups\tinvol_switches\tnet_xmit\tpg_sendto\tpg_recvfrom" > "$OUT/calls.tsv"
for t in $TESTS; do
  for s in $SERVERS; do
    u=$(url "$s" "$t"); pid=$(pid_of "${PORT[$s]}"); f="$OUT/$t-$s"
    taskset -c 1 wrk -t1 -c256 -d2s "$u" > /dev/null 2>&1 || true
    pg=$(pgrep -u postgres -f "postgres: postgres postgres" | paste -sd,)
    t0=$(ticks "$pid"); s0=$(switches "$pid")
    taskset -c 1 wrk -t1 -c256 -d"${D}s" "$u" > "$f.wrk" 2>&1 & W=$!
    perf stat -x, -e "$CALLS" -p "$pid" -o "$f.stat" -- sleep "$D" & P1=$!
    perf stat -x, -e syscalls:sys_enter_sendto,syscalls:sys_enter_recvfrom -p "$pg" -o "$f.pgstat" -- sleep "$D" & P2=$!
    wait $W; wait $P1 || true; wait $P2 || true
    t1=$(ticks "$pid"); s1=$(switches "$pid")
    n=$(awk '/requests in/{print $1}' "$f.wrk")
    per() { awk -F, -v e="$1" -v n="$n" '$3 ~ e {printf "%.3f", $1 / n}' "$2"; }
    echo -e "$t\t$s\t$n\t$(awk -v a="$t0" -v b="$t1" -v hz="$HZ" -v n="$n" 'BEGIN{printf "%.2f", (b - a) / hz / n * 1e6}')\t$(per raw_syscalls "$f.stat")\t$(per sendto "$f.stat")\t$(per recvfrom "$f.stat")\t$(per epoll_wait "$f.stat")\t$(per io_uring_enter "$f.stat")\t$(per sched_switch "$f.stat")\t$(echo "$s0 $s1" | awk -v n="$n" '{printf "%.3f\t%.3f", ($3 - $1) / n, ($4 - $2) / n}')\t$(per net_dev_xmit "$f.stat")\t$(per sendto "$f.pgstat")\t$(per recvfrom "$f.pgstat")" >> "$OUT/calls.tsv"
    [ "${PERF_RECORD:-1}" = 0 ] && continue
    taskset -c 1 wrk -t1 -c256 -d"${D}s" "$u" > "$f.wrk-perf" 2>&1 & W=$!
    perf record -g -F 2000 -p "$pid" -o "$f.perf" -- sleep $((D - 1)) > /dev/null 2>&1 & P1=$!
    wait $P1 || true; wait $W
  done
done
column -t "$OUT/calls.tsv"

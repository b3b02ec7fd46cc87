#!/usr/bin/env bash
# bench/start-peers.sh - start the peer servers, each pinned to SERVER_CPU (default 0) with one
# worker, and record their PIDs in /tmp/bench-peers.pids; `start-peers.sh stop` stops exactly
# those PIDs. Ports: nginx 8081, h2o 8082, may-minihttp 8083, actix-web 8084, xitca-web 8085,
# libreactor 8086.
# nginx and h2o are Debian's packages, run with bench/peers/nginx-tfb.conf and h2o-tfb.conf.
# Every other peer is a binary built by hand outside the repository (bench/peers/README.md says
# how); nothing here builds one. Each is found at the path its variable names:
#   MAY_BIN=/tmp/bench-target/release/mayhttp       (reads PORT and WORKERS)
#   ACTIX_BIN=/tmp/bench-target/release/actixjson   (reads PORT and WORKERS)
#   XITCA_BIN=/tmp/bench-target/release/xitcajson   (reads PORT and WORKERS)
#   LIBREACTOR_BIN=/tmp/peers/libreactor-8086/libreactor  (port 8086 set at build time; forks
#                                                         one worker per CPU in SERVER_CPU)
# Usage: start-peers.sh [nginx] [h2o] [may] [actix] [xitca] [libreactor]   (no args = all but libreactor)
#        start-peers.sh stop
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CPU=${SERVER_CPU:-0}; PIDS=/tmp/bench-peers.pids
if [ "${1:-}" = stop ]; then
  [ -f $PIDS ] || exit 0
  while read -r pid name; do kill "$pid" 2>/dev/null && echo "stopped $name ($pid)" || true; done < $PIDS
  rm -f $PIDS; exit 0
fi
ulimit -n "$(ulimit -Hn)"
want=${*:-nginx h2o may actix xitca}
rust_peer() { # name binary port
  [ -x "$2" ] || { echo "$1: no binary at $2 (bench/peers/README.md)" >&2; return 1; }
  PORT=$3 WORKERS=1 taskset -c "$CPU" "$2" > "/tmp/bench-$1.log" 2>&1 &
  echo "$! $1" >> $PIDS
}
libreactor_peer() { # port 8086 is set at build time (the TFB source hard-codes 8080)
  local bin=${LIBREACTOR_BIN:-/tmp/peers/libreactor-8086/libreactor} p w
  [ -x "$bin" ] || { echo "libreactor: no binary at $bin (set LIBREACTOR_BIN)" >&2; return 1; }
  : > /tmp/bench-libreactor.log
  taskset -c "$CPU" "$bin" > /tmp/bench-libreactor.log 2>&1 &
  p=$!; echo "$p libreactor" >> $PIDS
  # the parent only forks and waits; its workers survive it, so record them too
  for _ in $(seq 50); do grep -q 'libreactor running with' /tmp/bench-libreactor.log && break; sleep 0.1; done
  for w in $(pgrep -P "$p" || true); do echo "$w libreactor-worker" >> $PIDS; done
}
for s in $want; do
  case $s in
    nginx) mkdir -p /tmp/bench-nginx
           taskset -c "$CPU" nginx -p /tmp/bench-nginx -e /tmp/bench-nginx/error.log -c "$HERE/peers/nginx-tfb.conf" > /tmp/bench-nginx/stdout 2>&1 &
           echo "$! nginx" >> $PIDS ;;
    h2o)   mkdir -p /tmp/bench-h2o && chmod 777 /tmp/bench-h2o
           taskset -c "$CPU" h2o -c "$HERE/peers/h2o-tfb.conf" > /tmp/bench-h2o/stdout 2>&1 &
           echo "$! h2o" >> $PIDS ;;
    may)   rust_peer may-minihttp "${MAY_BIN:-/tmp/bench-target/release/mayhttp}" 8083 ;;
    actix) rust_peer actix-web "${ACTIX_BIN:-/tmp/bench-target/release/actixjson}" 8084 ;;
    xitca) rust_peer xitca-web "${XITCA_BIN:-/tmp/bench-target/release/xitcajson}" 8085 ;;
    libreactor) libreactor_peer ;;
    *) echo "unknown peer $s" >&2; exit 2 ;;
  esac
done
sleep 1; cat $PIDS

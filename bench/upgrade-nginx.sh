#!/usr/bin/env bash
# bench/upgrade-nginx.sh - nginx's binary upgrade (USR2 to the master, then QUIT to the old
# one) N times under load, beside `twelve serve` upgraded N times through its control socket,
# with one loop and one load for both: each server alone in a network namespace of its own
# (tcp_migrate_req=0), `twelve bench` driving keep-alive connections (-c 4) and a new
# connection per request (--close -c 2) at GET /plaintext, an upgrade at random 0-1 s
# intervals. A measurement, not a pass/fail: it records the requests, the client's errors by
# kind and the namespace's TCP counter deltas (OutRsts, ListenDrops, ListenOverflows,
# TCPMigrateReqFailure) for each server. nginx ignores USR2 while an old master lives, so each
# of its upgrades waits for the old master's exit; twelve's wait alike here (back-to-back
# upgrades are tests/upgrade.rs's).
#
# Usage: bench/upgrade-nginx.sh BIN OUTDIR   (BIN: the twelve binary to serve and load with)
# Env:   N=100
# Needs root (ip netns), iproute2, curl, jq and Debian's nginx (/usr/sbin/nginx). All it
# starts runs in its namespaces, which it empties (by PID) and deletes.
set -euo pipefail
BIN=$1
OUT=$2
N=${N:-100}
NGINX=/usr/sbin/nginx
ADDR=127.0.0.1:8080
mkdir -p "$OUT/raw"

NS=
cleanup() {
  if [ -n "$NS" ]; then
    # Whatever is left in the namespace was started here.
    ip netns pids "$NS" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    ip netns del "$NS" 2>/dev/null || true
    NS=
  fi
}
trap cleanup EXIT

new_namespace() {
  NS=twelve-bench-up-$$-$1
  ip netns add "$NS"
  ip netns exec "$NS" sh -c 'ip link set lo up && echo 0 > /proc/sys/net/ipv4/tcp_migrate_req'
}

# "Group:Name value" for every TCP counter of the namespace.
counters() {
  ip netns exec "$NS" cat /proc/net/snmp /proc/net/netstat |
    awk '{ if (NR % 2) { split($0, names) } else { for (i = 2; i <= NF; i++) print names[1] names[i], $i } }' |
    sed 's/: */:/'
}

deltas() {
  local k
  for k in Tcp:OutRsts TcpExt:ListenDrops TcpExt:ListenOverflows TcpExt:TCPMigrateReqFailure; do
    printf '%s=%s ' "$k" "$(($(awk -v k="$k" '$1 == k { print $2 }' "$2") - $(awk -v k="$k" '$1 == k { print $2 }' "$1")))"
  done
}

# A random 0-1 s pause, in seconds.
gap() { printf '0.%03d' $((RANDOM % 1000)); }

# Waits until process $1 is gone, or a zombie whose parent has not reaped it (bounded: 30 s).
await_exit() {
  local i state
  for i in $(seq 3000); do
    state=$( (sed 's/.*) //' "/proc/$1/stat" 2>/dev/null || true) | cut -c1)
    case $state in '' | Z | X) return 0 ;; esac
    sleep 0.01
  done
  echo "process $1 still running after 30 s" >&2
  return 1
}

# Waits until GET /plaintext answers in the namespace (bounded: 10 s).
await_serving() {
  local i
  for i in $(seq 1000); do
    ip netns exec "$NS" curl -sf "http://$ADDR/plaintext" >/dev/null && return 0
    sleep 0.01
  done
  echo "nothing answers on $ADDR" >&2
  return 1
}

# Starts the two loads in the namespace; they run until `stop_load`.
LOAD=()
start_load() {
  local name=$1
  LOAD=()
  ip netns exec "$NS" "$BIN" bench -c 4 -t 1 -d 1h --warmup 0 --max-errors 100% --json \
    "http://$ADDR/plaintext" > "$OUT/raw/$name-keepalive.json" 2> "$OUT/raw/$name-keepalive.err" &
  LOAD+=($!)
  ip netns exec "$NS" "$BIN" bench --close -c 2 -t 1 -d 1h --warmup 0 --max-errors 100% --json \
    "http://$ADDR/plaintext" > "$OUT/raw/$name-close.json" 2> "$OUT/raw/$name-close.err" &
  LOAD+=($!)
  # The clients' connections are up well within this; the first upgrade then finds them.
  sleep 1
}

# SIGINT ends a bench run early with its full report.
stop_load() {
  local p
  for p in "${LOAD[@]}"; do kill -INT "$p"; done
  for p in "${LOAD[@]}"; do wait "$p" || true; done
}

# One line per load: requests and every error kind that is not zero.
load_line() {
  local kind
  for kind in keepalive close; do
    jq -j --arg k "$kind" '"\($k): requests=\(.requests) errors=\(.errors | with_entries(select(.key != "status" and .value != 0)) | tojson); "' \
      "$OUT/raw/$1-$kind.json"
  done
}

measure_nginx() {
  local dir=$OUT/raw/nginx old master i
  mkdir -p "$dir"
  new_namespace nginx
  cat > "$dir/nginx.conf" <<EOF
daemon on;
master_process on;
worker_processes 2;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 4096; }
http { access_log off; client_body_temp_path $dir; proxy_temp_path $dir;
  fastcgi_temp_path $dir; uwsgi_temp_path $dir; scgi_temp_path $dir;
  server { listen $ADDR; location = /plaintext { return 200 "Hello, World!"; } } }
EOF
  rm -f "$dir/nginx.pid"
  ip netns exec "$NS" "$NGINX" -p "$dir" -c "$dir/nginx.conf"
  await_serving
  counters > "$dir/before"
  start_load nginx
  for i in $(seq "$N"); do
    old=$(cat "$dir/nginx.pid")
    kill -USR2 "$old"
    # The new master writes nginx.pid once its listeners and workers are set up (daemon on:
    # nginx refuses USR2 in a master whose parent is the one it started with).
    for _ in $(seq 3000); do
      master=$(cat "$dir/nginx.pid" 2>/dev/null || true)
      [ -n "$master" ] && [ "$master" != "$old" ] && break
      sleep 0.01
    done
    [ "$master" != "$old" ] || { echo "nginx upgrade $i: no new master" >&2; return 1; }
    kill -QUIT "$old"
    await_exit "$old"
    sleep "$(gap)"
  done
  # Before the load stops: its own teardown is not the upgrades'.
  counters > "$dir/after"
  stop_load
  echo "nginx, $N USR2+QUIT upgrades: $(load_line nginx)netns $(deltas "$dir/before" "$dir/after")"
  kill -QUIT "$(cat "$dir/nginx.pid")"
  cleanup
}

measure_twelve() {
  local dir=$OUT/raw/twelve answer pid i
  mkdir -p "$dir"
  new_namespace twelve
  ip netns exec "$NS" "$BIN" serve --listen "$ADDR" --drain-timeout 5 --upgrade-timeout 3 \
    --control "$dir/control.sock" > "$dir/serve.out" 2> "$dir/serve.err" &
  pid=$!
  await_serving
  counters > "$dir/before"
  start_load twelve
  for i in $(seq "$N"); do
    answer=$("$BIN" upgrade --control "$dir/control.sock")
    case $answer in ready*) ;; *) echo "twelve upgrade $i: $answer" >&2; return 1 ;; esac
    await_exit "$pid"
    pid=${answer##*pid=}
    sleep "$(gap)"
  done
  # Before the load stops: its own teardown is not the upgrades'.
  counters > "$dir/after"
  stop_load
  echo "twelve, $N control-socket upgrades: $(load_line twelve)netns $(deltas "$dir/before" "$dir/after")"
  kill -TERM "$pid"
  await_exit "$pid"
  cleanup
}

measure_twelve
measure_nginx

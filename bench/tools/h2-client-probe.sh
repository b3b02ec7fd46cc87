#!/usr/bin/env bash
# bench/tools/h2-client-probe.sh - where an HTTP/2 client's CPU goes per request, beside h2load
# (issue 32): h2o on CPU 0 (one thread, bench/h2o-conf.sh), each client on CPU 1 for WARMUP +
# DURATION seconds, and `perf stat` on the client over 2 s of its measured part: task-clock,
# context switches, syscalls by kind, io_uring completions and submissions, segments sent
# (net:net_dev_xmit) and libc mallocs, each per request (the client's req/s times the 2 s).
# Rounds alternate the clients' order (bench/order.sh: A B, B A, ...). probe.tsv has one row per
# run and event.
#
# Usage: bench/tools/h2-client-probe.sh OUTDIR
# Env:   ROUNDS=2 DURATION=4 WARMUP=1 CONNS=64 CELLS="h2c:1 h2:10" (protocol:streams)
#        CLIENTS="h2load twelve" BIN=path/to/twelve BIN_B=path/to/twelve (client twelve_b)
# Needs root (perf, a cgroup of the highest CPU weight for server and clients), h2o, h2load,
# perf with the syscalls/io_uring/net tracepoints; a uprobe on libc's malloc is added with
# `perf probe` when missing. Every process it starts is stopped by PID on exit.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/bench/h2o-conf.sh"
. "$ROOT/bench/order.sh"
OUT=${1:?usage: bench/tools/h2-client-probe.sh OUTDIR}
ROUNDS=${ROUNDS:-2}; DURATION=${DURATION:-4}; WARMUP=${WARMUP:-1}; CONNS=${CONNS:-64}
CELLS=${CELLS:-h2c:1 h2:10}; CLIENTS=${CLIENTS:-h2load twelve}
BIN=${BIN:-$ROOT/target/bench-bin/twelve}; BIN_B=${BIN_B:-}
UA=$(h2load --version | head -1)
[ "$DURATION" -ge 3 ] || { echo "h2-client-probe.sh: DURATION=$DURATION: at least 3" >&2; exit 2; }
PORT_C=9570; PORT_S=9571
mkdir -p "$OUT/raw"
LIBC=$(ldd "$(command -v h2load)" | awk '/libc.so/{print $3}')
perf probe -l 2>/dev/null | grep -q 'probe_libc:malloc ' || perf probe -q -x "$LIBC" malloc
EVENTS=task-clock,context-switches,raw_syscalls:sys_enter,syscalls:sys_enter_io_uring_enter
EVENTS+=,syscalls:sys_enter_read,syscalls:sys_enter_writev,syscalls:sys_enter_epoll_wait
EVENTS+=,syscalls:sys_enter_epoll_ctl,io_uring:io_uring_complete,io_uring:io_uring_submit_req
EVENTS+=,net:net_dev_xmit,probe_libc:malloc
CG=/sys/fs/cgroup/cpu/h2probe-$$
mkdir -p "$CG"; echo 262144 > "$CG/cpu.shares"; echo $$ > "$CG/tasks"
DIR=$(mktemp -d /tmp/h2-client-probe.XXXXXX)
PIDS=()
stop_all() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
  echo $$ > /sys/fs/cgroup/cpu/tasks; rmdir "$CG" 2>/dev/null || true; rm -rf "$DIR"
}
trap stop_all EXIT
"$ROOT/bench/tls-pki.sh" "$DIR" > /dev/null
mkdir -p "$DIR/h2o"
write_h2o_conf "$DIR" "$PORT_C" "$PORT_S"
taskset -c 0 h2o -c "$DIR/h2o/h2o.conf" > "$OUT/raw/h2o.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do
  curl -sf --http2-prior-knowledge "http://127.0.0.1:$PORT_C/plaintext" > /dev/null && break
  sleep 0.2
done

# Runs one client in the background; perf stat on it from WARMUP + 0.5 s for 2 s. Prints req/s.
probe() { # CLIENT PROTO STREAMS FILE
  local client=$1 proto=$2 m=$3 f=$4 url bin=$BIN pid
  if [ "$proto" = h2c ]; then url=http://127.0.0.1:$PORT_C/plaintext
  else url=https://127.0.0.1:$PORT_S/plaintext; fi
  case $client in
    h2load)
      taskset -c 1 h2load -t1 -c"$CONNS" -m"$m" --warm-up-time="$WARMUP" -D"$DURATION" "$url" \
        > "$f" 2>&1 &
      ;;
    twelve | twelve_b)
      [ "$client" = twelve ] || bin=$BIN_B
      local tls=(--h2c)
      [ "$proto" = h2c ] || tls=(--h2 --cacert "$DIR/ca.pem")
      taskset -c 1 "$bin" bench "${tls[@]}" --streams "$m" --cpus 1 -t1 -c"$CONNS" \
        -d"${DURATION}s" --warmup "${WARMUP}s" -H "user-agent: $UA" "$url" --json > "$f" 2> "$f.err" &
      ;;
    *) echo "h2-client-probe.sh: CLIENTS: h2load, twelve, twelve_b" >&2; exit 2 ;;
  esac
  pid=$!
  sleep "$WARMUP.5"
  perf stat -x, -e "$EVENTS" -p "$pid" -o "$f.stat" -- sleep 2
  wait "$pid" || true
  if [ "$client" = h2load ]; then awk '/^finished in/{print $4}' "$f"
  else python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rps"])' "$f"; fi
}

printf 'proto\tstreams\tclient\tround\trps\tevent\tper_req\n' > "$OUT/probe.tsv"
read -ra ORDER <<< "$CLIENTS"
for cell in $CELLS; do
  proto=${cell%%:*}; m=${cell##*:}
  for ((r = 1; r <= ROUNDS; r++)); do
    for client in $(round_order "$r" "${ORDER[@]}"); do
      f="$OUT/raw/$proto-m$m-$client-$r.out"
      rps=$(probe "$client" "$proto" "$m" "$f")
      # perf -x, rows: value,unit,event,... ; task-clock is in ms, shown as us per request.
      awk -F, -v p="$proto" -v m="$m" -v c="$client" -v r="$r" -v rps="$rps" \
        '$1 ~ /^[0-9.]+$/ {v = $1 / (rps * 2); if ($3 == "task-clock") {v *= 1000; $3 = "task-clock-us"}
          printf "%s\t%s\t%s\t%s\t%.0f\t%s\t%.4f\n", p, m, c, r, rps, $3, v}' "$f.stat" >> "$OUT/probe.tsv"
    done
  done
done
# Medians per cell, client and event.
python3 - "$OUT/probe.tsv" > "$OUT/probe-summary.txt" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
cells = {}
for r in rows:
    cells.setdefault((r["proto"], r["streams"], r["event"]), {}).setdefault(r["client"], []).append(float(r["per_req"]))
clients = sorted({r["client"] for r in rows})
print("\t".join(["proto", "streams", "event"] + clients))
for (p, m, e), by in cells.items():
    print("\t".join([p, m, e] + [f"{statistics.median(by[c]):.4f}" if c in by else "NA" for c in clients]))
PY
cat "$OUT/probe-summary.txt"

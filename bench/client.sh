#!/usr/bin/env bash
# bench/client.sh - issue 4's benchmark: client CPU per request of `twelve bench` against wrk's,
# on the same servers (nginx from bench/start-peers.sh, and `twelve serve`), same connections and
# duration, client pinned to CPU 1, servers to CPU 0, interleaved rounds (wrk, twelve, wrk, ...),
# both with the server capped at 50% of a core (the server is the limit) and uncapped (the
# client is the limit). One TSV line per run; medians in summary.md. Last, on the capped
# servers, what each client's arrival pattern makes the server do (perf on CPU 0): epoll
# waits and context switches per request. Needs root, wrk, nginx, linux-perf and cargo.
#
# Usage: bench/client.sh [OUTDIR]        (default bench/runs/<date>-client)
# Env:   ROUNDS=5  CONNS=256  DURATION_S=10  WARMUP_S=2  PORT=8090
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/bench/runs/$(date +%F)-client}
ROUNDS=${ROUNDS:-5}; CONNS=${CONNS:-256}; DURATION_S=${DURATION_S:-10}; WARMUP_S=${WARMUP_S:-2}
PORT=${PORT:-8090}
mkdir -p "$OUT/raw"

. "$ROOT/bench/common.sh"
start_servers /json nginx

# Prints "requests rps"; the caller's `time` gives the client's own user and system CPU.
run_wrk() {
  local f=$2
  timeout 60 taskset -c 1 wrk -t1 -c"$CONNS" -d"${WARMUP_S}s" "${TFB_HDRS[@]}" "$1" > /dev/null 2>&1 || true
  TIMEFORMAT='%U %S %R'
  { time timeout 60 taskset -c 1 wrk -t1 -c"$CONNS" -d"${DURATION_S}s" --timeout 5s "${TFB_HDRS[@]}" "$1" > "$f" 2>&1; } 2> "$f.time"
  client_counts wrk "$f"
}
run_twelve() {
  local f=$2
  # Warmed up by a separate run exactly as wrk is, so both processes are charged the same way.
  timeout 60 "$BIN" bench "$1" --cpus 1 -t1 -c"$CONNS" -d"${WARMUP_S}s" --warmup 0 "${TFB_HDRS[@]}" > /dev/null 2>&1 || true
  TIMEFORMAT='%U %S %R'
  { time timeout 60 "$BIN" bench "$1" --cpus 1 -t1 -c"$CONNS" -d"${DURATION_S}s" --warmup 0 --timeout 5s "${TFB_HDRS[@]}" --json > "$f" 2> "$f.err"; } 2> "$f.time"
  client_counts twelve "$f"
}

{
  echo "# twelve bench vs wrk: client CPU per request"
  echo
  echo "- date: $(date -u +%FT%TZ)"
  echo "- twelve: $("$BIN" --version)"
  echo "- commit: $(cd "$ROOT" && git rev-parse --short=12 HEAD)"
  echo "- kernel: $(uname -r); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "- pinning: servers on CPU 0 (one worker), client on CPU 1; -t1 -c$CONNS, ${DURATION_S}s measured after ${WARMUP_S}s warm-up"
  echo "- command: \`bench/client.sh\` (ROUNDS=$ROUNDS)"
  echo "- client CPU is user+sys of the whole client process from bash \`time\`; each client is"
  echo "  warmed up by a separate ${WARMUP_S}s run first, so neither is charged for its warm-up"
} > "$OUT/README.md"

TSV="$OUT/runs.tsv"
echo -e "mode\tserver\tclient\tround\trequests\trps\tuser_s\tsys_s\twall_s\tcpu_us_per_req" > "$TSV"
for mode in capped uncapped; do
  if [ $mode = capped ]; then "$ROOT/bench/cpu-quota.sh" 50 "$PORT" 8081 > "$OUT/raw/quota.log"; fi
  for ((r = 1; r <= ROUNDS; r++)); do
    for srv in "nginx=8081" "twelve=$PORT"; do
      name=${srv%%=*}; port=${srv##*=}; url="http://127.0.0.1:$port/json"
      for client in wrk twelve; do
        f="$OUT/raw/$mode-$name-$client-$r.out"
        read -r reqs rps < <(run_$client "$url" "$f")
        read -r u s w < "$f.time"
        cpu=$(awk -v u="$u" -v s="$s" -v n="$reqs" 'BEGIN{printf "%.3f", 1e6*(u+s)/n}')
        echo -e "$mode\t$name\t$client\t$r\t$reqs\t$rps\t$u\t$s\t$w\t$cpu" >> "$TSV"
        sleep 1
      done
    done
  done
  if [ $mode = capped ]; then "$ROOT/bench/cpu-quota.sh" off "$PORT" 8081 >> "$OUT/raw/quota.log"; fi
done

# How each client's arrival pattern changes the capped server's own work: perf counts, on the
# server's CPU, epoll waits, io_uring submissions and context switches (the server going to
# sleep and being woken) per request. A server that drains a burst and sleeps pays for it.
PAT="$OUT/server-pattern.tsv"
echo -e "server\tclient\trequests\tepoll_wait_per_req\tio_uring_enter_per_req\tcontext_switches_per_req" > "$PAT"
"$ROOT/bench/cpu-quota.sh" 50 "$PORT" 8081 >> "$OUT/raw/quota.log"
for srv in "nginx=8081" "twelve=$PORT"; do
  name=${srv%%=*}; port=${srv##*=}; url="http://127.0.0.1:$port/json"
  for client in wrk twelve; do
    f="$OUT/raw/pattern-$name-$client.out"
    # The servers are warm from the runs above; perf counts CPU 0 while the client runs.
    ev=syscalls:sys_enter_epoll_wait,syscalls:sys_enter_io_uring_enter,context-switches
    if [ $client = wrk ]; then
      perf stat -C 0 -x, -o "$f.perf" -e "$ev" -- timeout 60 taskset -c 1 wrk -t1 -c"$CONNS" \
        -d"${DURATION_S}s" "${TFB_HDRS[@]}" "$url" > "$f" 2>&1
    else
      perf stat -C 0 -x, -o "$f.perf" -e "$ev" -- timeout 60 "$BIN" bench "$url" --cpus 1 -t1 \
        -c"$CONNS" -d"${DURATION_S}s" --warmup 0 "${TFB_HDRS[@]}" --json > "$f" 2> "$f.err"
    fi
    read -r reqs _ < <(client_counts "$client" "$f")
    per() { awk -F, -v e="$1" -v n="$reqs" '$3 ~ e {printf "%.4f", $1 / n}' "$f.perf"; }
    echo -e "$name\t$client\t$reqs\t$(per epoll_wait)\t$(per io_uring_enter)\t$(per context-switches)" >> "$PAT"
  done
done
"$ROOT/bench/cpu-quota.sh" off "$PORT" 8081 >> "$OUT/raw/quota.log"

python3 - "$TSV" <<'PY' > "$OUT/summary.md"
import csv, sys, statistics as st
rs = list(csv.DictReader(open(sys.argv[1]), delimiter='\t'))
def med(xs): return st.median(xs)
print("| mode | server | client | runs | req/s median (min-max) | client CPU µs/req median (min-max) |")
print("|---|---|---|---|---|---|")
g = {}
for r in rs: g.setdefault((r['mode'], r['server'], r['client']), []).append(r)
for k, v in g.items():
    rps = [float(r['rps']) for r in v]; cpu = [float(r['cpu_us_per_req']) for r in v]
    print(f"| {k[0]} | {k[1]} | {k[2]} | {len(v)} | {med(rps):,.0f} ({min(rps):,.0f}-{max(rps):,.0f}) | {med(cpu):.2f} ({min(cpu):.2f}-{max(cpu):.2f}) |")
print()
for mode in ('capped', 'uncapped'):
    for srv in ('nginx', 'twelve'):
        w, t = g.get((mode, srv, 'wrk')), g.get((mode, srv, 'twelve'))
        if not w or not t: continue
        # pair by round: the runs were interleaved, so round r of each side saw the same noise
        cpu = med([float(b['cpu_us_per_req']) / float(a['cpu_us_per_req']) for a, b in zip(w, t)])
        rps = med([float(b['rps']) / float(a['rps']) for a, b in zip(w, t)])
        print(f"- {mode}, {srv}: twelve/wrk client CPU per request {cpu:.3f}, req/s {rps:.3f} (median of per-round ratios)")
PY
{ echo; echo "Capped server's own work per request, by client (server-pattern.tsv, counted on CPU 0):"; echo
  column -t "$PAT" | sed 's/^/    /'; } >> "$OUT/summary.md"
cat "$OUT/summary.md"

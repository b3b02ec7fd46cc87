#!/usr/bin/env bash
# bench/clients.sh - issue 19's client comparison: twelve bench, on its epoll engine (twelve)
# and on io_uring (twelve_uring, `--io uring`), against wrk and HttpArena's gcannon (an
# io_uring client, built outside the repository: GCANNON=path) as clients of the same servers,
# every client pinned to CPU 1 with one thread, the servers to CPU 0 with one worker, rounds
# interleaved (each round starts with the next client of the list).
#
#   capped:  nginx capped at 50% of CPU 0, so the server is the limit: the req/s each client
#            measured (they should agree) and each client's CPU per request.
#   bound:   twelve serve uncapped on CPU 0, so the client is the limit: req/s per client core
#            (req/s over the client's CPU-seconds per second), keep-alive GET and pipelined 16.
#   memory:  resident memory per connection: peak RSS at -c MANY less at -c 100, over the
#            difference, against uncapped twelve serve.
#
# Clients named *_read book each response when it was read (`--rx-time read`), and so nap as
# briefly as before the kernel's receive stamps (1% of the latency, 20 µs at most): the A/B of
# that change.
#
# Usage: bench/clients.sh [OUTDIR]        (default bench/runs/<date>-clients)
# Env:   GCANNON=/tmp/peers/httparena/gcannon  ROUNDS=5  CONNS=64
#        DURATION=5 (DURATION_S too) WARMUP_S=1  MANY=10000  PORT=8090  SECTIONS="capped bound memory"
#        CLIENTS="wrk gcannon twelve twelve_uring" (also: twelve_read twelve_uring_read)
# Needs root (the cgroup cap), wrk, nginx, GNU time and cargo. Client CPU is user+sys of the
# whole client process from bash `time`; each client is warmed up by a separate run first.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/bench/runs/$(date +%F)-clients}
GCANNON=${GCANNON:-/tmp/peers/httparena/gcannon}
ROUNDS=${ROUNDS:-5}; CONNS=${CONNS:-64}; DURATION_S=${DURATION:-${DURATION_S:-5}}; WARMUP_S=${WARMUP_S:-1}
MANY=${MANY:-10000}; PORT=${PORT:-8090}; SECTIONS=${SECTIONS:-capped bound memory}
read -r -a CLIENTS <<< "${CLIENTS:-wrk gcannon twelve twelve_uring}"
[ -x "$GCANNON" ] || { echo "no gcannon at $GCANNON (build github MDA2AV/gcannon outside the repository)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs GNU time (apt install time)" >&2; exit 2; }
mkdir -p "$OUT/raw"

. "$ROOT/bench/common.sh"
start_servers /json nginx

# run_CLIENT URL DEPTH CONNS SECONDS OUTFILE: one run on CPU 1, its report in OUTFILE.
run_wrk() {
  local pipe=()
  [ "$2" -gt 1 ] && pipe=(-s "$ROOT/bench/pipeline.lua")
  taskset -c 1 timeout 120 wrk -t1 -c"$3" -d"$4s" --timeout 5s "${pipe[@]}" "$1" -- "$2" > "$5" 2>&1
}
run_gcannon() {
  taskset -c 1 timeout 120 "$GCANNON" "$1" -c "$3" -t 1 -d "$4s" -p "$2" --json > "$5" 2>&1
}
run_twelve() { # the epoll engine, named: `--io auto`, the default, picks io_uring where it can
  timeout 120 "$BIN" bench "$1" --io epoll --cpus 1 -t1 -c"$3" -p "$2" -d"$4s" --warmup 0 --timeout 5s \
    --json "${EXTRA[@]}" > "$5" 2> "$5.err"
}
run_twelve_uring() {
  timeout 120 "$BIN" bench "$1" --io uring --cpus 1 -t1 -c"$3" -p "$2" -d"$4s" --warmup 0 \
    --timeout 5s --json "${EXTRA[@]}" > "$5" 2> "$5.err"
}
EXTRA=()
run_twelve_read() { EXTRA=(--rx-time read); run_twelve "$@"; EXTRA=(); }
run_twelve_uring_read() { EXTRA=(--rx-time read); run_twelve_uring "$@"; EXTRA=(); }
# Prints the responses a client counted.
count() {
  case $1 in
    wrk) awk '/requests in/{print $1}' "$2" ;;
    gcannon) python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["responses"])' "$2" ;;
    twelve*) python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["requests"])' "$2" ;;
  esac
}
# CPU ticks (utime + stime) of the server listening on a port, for the "bound" client share.
server_ticks() {
  local pid
  pid=$(ss -Hltnp "sport = :$1" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2)
  awk '{print $12 + $13}' <(sed 's/.*) //' "/proc/$pid/stat")
}

{
  echo "# twelve bench against wrk and gcannon: what each client costs and measures"
  echo
  echo "- date: $(date -u +%FT%TZ); kernel $(uname -r); $(nproc) CPUs"
  echo "- twelve: $("$BIN" --version | head -1)"
  echo "- commit: $(cd "$ROOT" && git rev-parse --short=12 HEAD)"
  echo "- wrk: $(dpkg-query -W -f '${Version}' wrk 2>/dev/null); gcannon: sha256 $(sha256sum "$GCANNON" | cut -c1-16)"
  echo "- command: \`ROUNDS=$ROUNDS CONNS=$CONNS DURATION=$DURATION_S MANY=$MANY SECTIONS=\"$SECTIONS\" CLIENTS=\"${CLIENTS[*]}\" bench/clients.sh\`"
  echo "- every client: one thread on CPU 1, -c$CONNS, ${DURATION_S}s after a separate ${WARMUP_S}s warm-up run;"
  echo "  servers on CPU 0 with one worker; client CPU is user+sys of the client process (bash \`time\`)"
  echo "- capped: nginx (bench/peers/nginx-tfb.conf) capped at 50% of CPU 0, GET /json"
  echo "- bound: twelve serve uncapped on CPU 0, GET /json, and GET /plaintext pipelined 16"
  echo "- memory: peak RSS (GNU time) at -c $MANY less at -c 100, over $((MANY - 100)) connections, 2 s runs"
} > "$OUT/README.md"

TSV="$OUT/runs.tsv"
echo -e "mode\tdepth\tclient\tround\tresponses\twall_s\tclient_cpu_s\tserver_cpu_s" > "$TSV"
TIMEFORMAT='%R %U %S'
one() { # MODE DEPTH CLIENT ROUND URL SERVER_PORT
  local f="$OUT/raw/$1-p$2-$3-$4" t0 t1
  "run_$3" "$5" "$2" "$CONNS" "$WARMUP_S" "$f.warm" || true
  t0=$(server_ticks "$6")
  { time "run_$3" "$5" "$2" "$CONNS" "$DURATION_S" "$f"; } 2> "$f.time"
  t1=$(server_ticks "$6")
  read -r w u s < "$f.time"
  echo -e "$1\t$2\t$3\t$4\t$(count "$3" "$f")\t$w\t$(awk -v u="$u" -v s="$s" 'BEGIN{print u + s}')\t$(awk -v a="$t0" -v b="$t1" -v hz="$(getconf CLK_TCK)" 'BEGIN{print (b - a) / hz}')" >> "$TSV"
}
# Round r starts with client r (mod the clients) and goes round the list.
order() { local k n=${#CLIENTS[@]}; for ((k = 0; k < n; k++)); do echo "${CLIENTS[$(( (k + $1) % n ))]}"; done; }
on() { [[ " $SECTIONS " == *" $1 "* ]]; }
on capped && "$ROOT/bench/cpu-quota.sh" 50 8081 > "$OUT/raw/quota.log"
on capped && for ((r = 1; r <= ROUNDS; r++)); do
  for c in $(order "$r"); do one capped 1 "$c" "$r" http://127.0.0.1:8081/json 8081; done
done
"$ROOT/bench/cpu-quota.sh" off 8081 >> "$OUT/raw/quota.log"
on bound && for depth in 1 16; do
  path=/json; [ "$depth" -gt 1 ] && path=/plaintext
  for ((r = 1; r <= ROUNDS; r++)); do
    for c in $(order "$r"); do one bound "$depth" "$c" "$r" "http://127.0.0.1:$PORT$path" "$PORT"; done
  done
done

MEM="$OUT/memory.tsv"
echo -e "client\tconns\tmax_rss_kib" > "$MEM"
ulimit -n "$(ulimit -Hn)"
on memory && for c in "${CLIENTS[@]}"; do
  for n in 100 "$MANY"; do
    f="$OUT/raw/memory-$c-$n"
    # Every run_ function: the *_read ones call the others.
    /usr/bin/time -f '%M' -o "$f.rss" bash -c "$(declare -f run_wrk run_gcannon run_twelve run_twelve_uring run_twelve_read run_twelve_uring_read); EXTRA=(); BIN=$BIN GCANNON=$GCANNON ROOT=$ROOT run_$c http://127.0.0.1:$PORT/json 1 $n 2 $f" || true
    echo -e "$c\t$n\t$(tail -1 "$f.rss")" >> "$MEM"
  done
done

python3 - "$TSV" "$MEM" "$MANY" "${CLIENTS[*]}" <<'PY' > "$OUT/summary.md"
import csv, sys, statistics as st
rows = list(csv.DictReader(open(sys.argv[1]), delimiter='\t'))
mem = list(csv.DictReader(open(sys.argv[2]), delimiter='\t'))
many = int(sys.argv[3])
clients = sys.argv[4].split()
mine = [c for c in clients if c.startswith('twelve')]
peers = [c for c in clients if not c.startswith('twelve')]
def runs(mode, depth, c): return [r for r in rows if r['mode'] == mode and r['depth'] == depth and r['client'] == c]
def rps(r): return float(r['responses']) / float(r['wall_s'])
def cpu_us(r): return 1e6 * float(r['client_cpu_s']) / float(r['responses'])
def per_core(r): return float(r['responses']) / float(r['client_cpu_s'])
def util(r): return float(r['client_cpu_s']) / float(r['wall_s'])
def srv(r): return float(r['server_cpu_s']) / float(r['wall_s'])
def m(xs): return f"{st.median(xs):,.2f} ({min(xs):,.2f}-{max(xs):,.2f})"
def ratio(mode, depth, f, c, me='twelve'):
    # per round: the runs of one round were back to back, so they shared the machine's state
    a, b = runs(mode, depth, me), runs(mode, depth, c)
    return st.median(f(x) / f(y) for x, y in zip(a, b))
print("Medians over the rounds (min-max). twelve ÷ peer: median of the per-round ratios.\n")
if any(r['mode'] == 'capped' for r in rows):
    print("## Capped server (nginx at 50% of CPU 0): the server is the limit\n")
    print("| client | runs | req/s measured | client CPU µs/req | client busy |")
    print("|---|---|---|---|---|")
    for c in clients:
        v = runs('capped', '1', c)
        print(f"| {c} | {len(v)} | {m([rps(r) for r in v])} | {m([cpu_us(r) for r in v])} | {st.median(util(r) for r in v):.0%} |")
    print()
    for me in mine:
        # ... and the new default against the same engine booking at the read (`_read`).
        for c in peers + [x for x in (me + '_read',) if x in clients]:
            print(f"- {me} ÷ {c}: req/s measured {ratio('capped', '1', rps, c, me):.3f}, client CPU per request {ratio('capped', '1', cpu_us, c, me):.3f}")
if any(r['mode'] == 'bound' for r in rows):
    print("\n## Uncapped twelve serve: the client is the limit\n")
    print("| load | client | runs | req/s | req/s per client core | client CPU µs/req | client busy | server busy |")
    print("|---|---|---|---|---|---|---|---|")
    for d, name in (('1', 'GET /json'), ('16', 'GET /plaintext, pipelined 16')):
        for c in clients:
            v = runs('bound', d, c)
            print(f"| {name} | {c} | {len(v)} | {st.median(rps(r) for r in v):,.0f} | {m([per_core(r) for r in v])} | {m([cpu_us(r) for r in v])} | {st.median(util(r) for r in v):.0%} | {st.median(srv(r) for r in v):.0%} |")
    print()
    for d, name in (('1', 'GET /json'), ('16', 'pipelined 16')):
        for me in mine:
            for c in peers:
                print(f"- {name}, {me} ÷ {c}: req/s per client core {ratio('bound', d, per_core, c, me):.3f}, CPU per request {ratio('bound', d, cpu_us, c, me):.3f}")
if mem:
    print("\n## Memory per connection\n")
    print("| client | peak RSS at -c 100 (KiB) | at -c %d (KiB) | per connection (KiB) |" % many)
    print("|---|---|---|---|")
    for c in clients:
        lo = next(float(r['max_rss_kib']) for r in mem if r['client'] == c and r['conns'] == '100')
        hi = next(float(r['max_rss_kib']) for r in mem if r['client'] == c and r['conns'] == str(many))
        print(f"| {c} | {lo:,.0f} | {hi:,.0f} | {(hi - lo) / (many - 100):.2f} |")
PY
cat "$OUT/summary.md"

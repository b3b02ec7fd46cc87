#!/usr/bin/env bash
# bench/pacing.sh - issue 33's proof: does twelve bench's pacing (naps only when the client is
# the limit; the open model's --slack) measure what independent clients measure, and what does
# it cost? Every client is pinned to CPU 1 with one thread, every server to CPU 0 with one
# worker; rounds interleaved (round r starts with client r of the list), medians quoted.
#
#   capped:  nginx capped at 50% of CPU 0 (cpu-quota.sh), GET /json at -c64 and -c256:
#            the req/s each client measured (twelve should be within 2% of wrk and gcannon,
#            not above them: its naps must not batch requests for the server), and whether
#            twelve napped.
#   open:    twelve serve uncapped on CPU 0, the open model at RATES req/s, -c64: each client's
#            CPU per request (user+sys of the client process over the responses it counted),
#            twelve's schedule lag (p99 and max, from its self-check) and the server's CPU per
#            request beside each (its threads' schedstat over the run). Clients: twelve (the
#            default --slack), twelve_1ms (--slack 1ms, wrk2's timer granularity), wrk2 -R,
#            oha -q.
#
# Usage: bench/pacing.sh [OUTDIR]        (default bench/runs/<date>-pacing)
# Env:   ROUNDS=3 DURATION_S=5 RATES="1000 10000 40000" SECTIONS="capped open" PORT=8190
#        BIN (default: target/bench-bin/twelve, built here)  WRK2=/tmp/pacing-peers/wrk2/wrk
#        GCANNON=/tmp/pacing-peers/gcannon/gcannon  OHA=/tmp/pacing-peers/cargo-root/bin/oha
# Peers are built outside the repository: wrk2 (github giltene/wrk2, `make`), gcannon (github
# MDA2AV/gcannon, `make` against liburing >= 2.4: Debian 12's 2.3 lacks io_uring_free_buf_ring,
# so liburing is built from github axboe/liburing first), oha (`cargo install oha --locked
# --root DIR`). Needs root (the cgroup cap), Debian's wrk and nginx, GNU time, python3.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/bench/runs/$(date +%F)-pacing}
ROUNDS=${ROUNDS:-3}; DURATION_S=${DURATION_S:-5}; RATES=${RATES:-1000 10000 40000}
SECTIONS=${SECTIONS:-capped open}; PORT=${PORT:-8190}
WRK2=${WRK2:-/tmp/pacing-peers/wrk2/wrk}
GCANNON=${GCANNON:-/tmp/pacing-peers/gcannon/gcannon}
OHA=${OHA:-/tmp/pacing-peers/cargo-root/bin/oha}
if [ -z "${BIN:-}" ]; then
  (cd "$ROOT" && cargo build -q --profile bench-bin --bin twelve)
  BIN=$ROOT/target/bench-bin/twelve
fi
for p in "$WRK2" "$GCANNON" /usr/bin/time; do
  [ -x "$p" ] || { echo "missing $p (see the header of bench/pacing.sh)" >&2; exit 2; }
done
# oha takes long to build; without it the open section runs the others and says so.
OPEN_CLIENTS=(twelve twelve_1ms wrk2 oha)
if [ ! -x "$OHA" ]; then
  echo "no oha at $OHA: the open section runs without it" >&2
  OPEN_CLIENTS=(twelve twelve_1ms wrk2)
fi
mkdir -p "$OUT/raw"

SRV_PID=
stop_all() {
  "$ROOT/bench/cpu-quota.sh" off 8081 >/dev/null 2>&1 || true
  "$ROOT/bench/start-peers.sh" stop >/dev/null 2>&1 || true
  if [ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; then wait "$SRV_PID" 2>/dev/null || true; fi
}
trap stop_all EXIT
ulimit -n "$(ulimit -Hn)"
wait_up() { for _ in $(seq 50); do curl -sf "$1" >/dev/null && return 0; sleep 0.2; done; echo "no answer at $1" >&2; exit 2; }

# CPU time of every thread of the process listening on PORT, ns (schedstat's first field).
server_ns() {
  local pid
  pid=$(ss -Hltnp "sport = :$1" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2)
  cat /proc/"$pid"/task/*/schedstat | awk '{s += $1} END {print s}'
}

# run_CLIENT URL CONNS SECONDS RATE OUTFILE: one run on CPU 1 (RATE 0: closed model).
run_wrk() { taskset -c 1 timeout 120 wrk -t1 -c"$2" -d"$3s" --timeout 5s "$1" > "$5" 2>&1; }
run_gcannon() { taskset -c 1 timeout 120 "$GCANNON" "$1" -c "$2" -t 1 -d "$3s" --json > "$5" 2>&1; }
run_wrk2() { taskset -c 1 timeout 120 "$WRK2" -t1 -c"$2" -d"$3s" -R"$4" --latency "$1" > "$5" 2>&1; }
run_oha() {
  taskset -c 1 timeout 120 "$OHA" --no-tui --output-format json -z "$3s" -c "$2" -q "$4" \
    --latency-correction "$1" > "$5" 2> "$5.err"
}
run_twelve() { # the default engine (--io auto) and pacing, as a user runs it
  local rate=()
  [ "$4" -gt 0 ] && rate=(-R "$4")
  timeout 120 "$BIN" bench "$1" --cpus 1 -t1 -c"$2" -d"$3s" --warmup 0 --timeout 5s "${rate[@]}" \
    --json "${EXTRA[@]}" > "$5" 2> "$5.err"
}
EXTRA=()
run_twelve_1ms() { EXTRA=(--slack 1ms); run_twelve "$@"; EXTRA=(); }
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
  echo "- commit: $(cd "$ROOT" && git rev-parse --short=12 HEAD)"
  echo "- wrk $(dpkg-query -W -f '${Version}' wrk 2>/dev/null); wrk2 $(git -C "$(dirname "$WRK2")" rev-parse --short HEAD 2>/dev/null || echo '?'); gcannon $(git -C "$(dirname "$GCANNON")" rev-parse --short HEAD 2>/dev/null || echo '?'); $("$OHA" --version 2>/dev/null | head -1 || echo 'oha: not built')"
  echo "- open-model clients: ${OPEN_CLIENTS[*]}"
  echo "- command: \`ROUNDS=$ROUNDS DURATION_S=$DURATION_S RATES=\"$RATES\" SECTIONS=\"$SECTIONS\" bench/pacing.sh\`"
  echo "- every client: one thread on CPU 1, ${DURATION_S}s; servers on CPU 0 with one worker;"
  echo "  client CPU is user+sys of the client process (bash \`time\`), server CPU its threads' schedstat"
  echo "- capped: nginx (bench/peers/nginx-tfb.conf) capped at 50% of CPU 0, GET /json, closed model"
  echo "- open: twelve serve uncapped on CPU 0, GET /json, -c64, the open model at each rate"
} > "$OUT/README.md"

TSV="$OUT/runs.tsv"
echo -e "section\tconns\trate\tclient\tround\tresponses\treported_rps\twall_s\tclient_cpu_s\tserver_cpu_s" > "$TSV"
TIMEFORMAT='%R %U %S'
one() { # SECTION CONNS RATE CLIENT ROUND URL PORT
  local f="$OUT/raw/$1-c$2-r$3-$4-$5" s0 s1 w u s
  s0=$(server_ns "$7")
  { time "run_$4" "$6" "$2" "$DURATION_S" "$3" "$f"; } 2> "$f.time"
  s1=$(server_ns "$7")
  read -r w u s < "$f.time"
  echo -e "$1\t$2\t$3\t$4\t$5\t$(count "$4" "$f")\t$(reported "$4" "$f")\t$w\t$(awk -v u="$u" -v s="$s" 'BEGIN{print u + s}')\t$(awk -v a="$s0" -v b="$s1" 'BEGIN{print (b - a) / 1e9}')" >> "$TSV"
}
order() { local k n=$#; local a=("$@"); for ((k = 0; k < n; k++)); do echo "${a[$(( (k + R) % n ))]}"; done; }
on() { [[ " $SECTIONS " == *" $1 "* ]]; }

if on capped; then
  SERVER_CPU=0 "$ROOT/bench/start-peers.sh" nginx > "$OUT/raw/peers.log"
  wait_up http://127.0.0.1:8081/json
  "$ROOT/bench/cpu-quota.sh" 50 8081 > "$OUT/raw/quota.log"
  for conns in 64 256; do
    for ((R = 1; R <= ROUNDS; R++)); do
      for c in $(order wrk gcannon twelve); do one capped "$conns" 0 "$c" "$R" http://127.0.0.1:8081/json 8081; done
    done
  done
  "$ROOT/bench/cpu-quota.sh" off 8081 >> "$OUT/raw/quota.log"
  "$ROOT/bench/start-peers.sh" stop >> "$OUT/raw/peers.log"
fi

if on open; then
  taskset -c 0 "$BIN" serve --listen "127.0.0.1:$PORT" --cpus 0 > "$OUT/raw/twelve-serve.log" 2>&1 &
  SRV_PID=$!
  wait_up "http://127.0.0.1:$PORT/json"
  for rate in $RATES; do
    for ((R = 1; R <= ROUNDS; R++)); do
      for c in $(order "${OPEN_CLIENTS[@]}"); do one open 64 "$rate" "$c" "$R" "http://127.0.0.1:$PORT/json" "$PORT"; done
    done
  done
fi

python3 "$ROOT/bench/tools/pacing-summary.py" "$OUT" > "$OUT/summary.md"
cat "$OUT/summary.md"

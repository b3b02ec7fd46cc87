#!/usr/bin/env bash
# bench/peers.sh - issue 14's whole comparison in one go, one table at the end: twelve against
# the fastest peer on each kind of test, with bench/peers/README.md's protocol: every server pinned
# to CPU 0 with one worker and capped at 50% of a core (cpu-quota.sh), the client pinned to
# CPU 1, rounds interleaved across the servers of a test (A B C A B C ...), medians quoted.
#
#   tfb     TechEmpower json (keep-alive, wrk -c$TFB_CONNS, TechEmpower's headers) and plaintext
#           (pipelined 16, pipeline.lua): twelve serve vs libreactor, with run.sh's wrk commands.
#   arena   HttpArena's profiles with their exact request bytes (bench/peers/arena/):
#           baseline (GET, POST Content-Length, POST chunked on /baseline11), pipelined (16 x
#           GET /pipeline) and limited-conn (reconnect every 10 requests, gcannon -r 10; wrk
#           cannot close a connection): twelve-engine's httparena example (built with
#           --profile bench-bin, started as `httparena 127.0.0.1:$ARENA_PORT`) vs rust-epoll, ringzero and
#           libreactorng. Skipped, loudly, while crates/engine/examples/httparena.rs does not exist.
#   static  a 10 KiB file of random bytes, ab -k -c$AB_C and ab -c$AB_C: twelve serve --root
#           (with its file cache, the default, and without: twelve-nocache) vs nginx (one
#           worker, sendfile on, access_log off) and the same nginx with open_file_cache
#           (nginx-ofc).
#   fixed   issue 13's server CPU per request at a fixed offered rate (HttpArena's latency-1m
#           idea): twelve bench's open model (-R, uniform) at FIXED_SHARE (60%) of the
#           slowest server's capped peak, TFB json against libreactor and HttpArena's GET
#           /baseline11 against the three engines; the server's CPU time over the requests
#           served, whether the rate held within 5%, and whether a server reached its cap. The
#           peaks come from this run's tfb and arena sections when they ran, else from
#           FIXED_JSON_RATE and FIXED_ARENA_RATE (a peak in req/s, of which FIXED_SHARE is
#           offered).
#
# With IO_AB=1 (the default) every section also runs twelve on the io_uring backend (`--io
# uring`, named twelve-uring) beside twelve on epoll: issue 13's same-code A/B, in the same
# interleaved rounds as the peers.
#
# The servers of a section run side by side and share one 50% cap (cpu-quota.sh puts them in
# one cgroup); only the one under load uses it. The peers are built outside the repository
# (see bench/peers/README.md and bench/peers/arena/README.md); this script only runs them.
#
# Usage: bench/peers.sh [OUTDIR]        (default bench/runs/<date>-peers)
# Env:   SECTIONS="tfb arena static" (add "fixed")  DURATION=10s  WARMUP=2s
#        FIXED_SHARE=0.6  FIXED_JSON_RATE, FIXED_ARENA_RATE (req/s, when tfb/arena did not run)
#        FIXED_CONNS=64
#        ROUNDS=5 (json, baseline, limited-conn, static)  PIPE_ROUNDS=3 (plaintext, pipelined)
#        TFB_CONNS=256  ARENA_CONNS=512  AB_C=100
#        ARENA_CLIENT=wrk (baseline and pipelined with arena.lua) or gcannon (HttpArena's own
#        client for all three profiles; limited-conn always uses gcannon)
#        PORT=8090 (twelve serve)  ARENA_PORT=8094 (the httparena example)  NGINX_PORT=8088
#        NGINX_OFC_PORT=8087  NOCACHE_PORT=8097 (static: nginx-ofc, twelve-nocache)
#        COALESCE=50us (fixed: also twelve with --coalesce 50us, named twelve-coalesce, on
#        COALESCE_PORT=8098; its latency cost shows in the summary's p50/p99 columns)
#        FIXED_CAP=1 (0: the fixed section's servers run uncapped)
#        IO_AB=1 (also twelve on io_uring: URING_PORT=8095, ARENA_URING_PORT=8096; 0: epoll only)
#        ARENA_BIN=/tmp/peers/httparena (rust-epoll, ringzero, libreactorng, gcannon)
#        LIBREACTOR_BIN=/tmp/peers/libreactor-8086/libreactor
# Writes OUTDIR/README.md (commands, versions, machine), raw/ (every client's output, logs),
# tfb.tsv, arena.tsv, static.tsv, fixed.tsv (one row per measured run; fixed-rates.tsv the
# offered rates) and summary.md (the tables).
# Needs root (cgroup CPU cap), Debian's wrk, nginx, apache2-utils, curl, and cargo. Every
# process it starts is stopped by PID on exit; every load run is bounded by `timeout`.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ARENA=$ROOT/bench/peers/arena
OUT=${1:-$ROOT/bench/runs/$(date +%F)-peers}
SECTIONS=${SECTIONS:-tfb arena static}
DURATION=${DURATION:-10s}; WARMUP=${WARMUP:-2s}
DUR_S=${DURATION%s}; WARM_S=${WARMUP%s}
ROUNDS=${ROUNDS:-5}; PIPE_ROUNDS=${PIPE_ROUNDS:-3}
TFB_CONNS=${TFB_CONNS:-256}; ARENA_CONNS=${ARENA_CONNS:-512}; AB_C=${AB_C:-100}
ARENA_CLIENT=${ARENA_CLIENT:-wrk}
FIXED_SHARE=${FIXED_SHARE:-0.6}; FIXED_CONNS=${FIXED_CONNS:-64}
PORT=${PORT:-8090}; ARENA_PORT=${ARENA_PORT:-8094}; NGINX_PORT=${NGINX_PORT:-8088}
NGINX_OFC_PORT=${NGINX_OFC_PORT:-8087}; NOCACHE_PORT=${NOCACHE_PORT:-8097}
COALESCE=${COALESCE:-}; COALESCE_PORT=${COALESCE_PORT:-8098}; FIXED_CAP=${FIXED_CAP:-1}
case $COALESCE in '' | *us) ;; *) echo "peers.sh: COALESCE takes microseconds, e.g. 50us" >&2; exit 2 ;; esac
IO_AB=${IO_AB:-1}; URING_PORT=${URING_PORT:-8095}; ARENA_URING_PORT=${ARENA_URING_PORT:-8096}
ARENA_BIN=${ARENA_BIN:-/tmp/peers/httparena}
LIBREACTOR_BIN=${LIBREACTOR_BIN:-/tmp/peers/libreactor-8086/libreactor}
export LIBREACTOR_BIN
# A run that has not ended this long after its duration is stuck: timeout ends it.
BOUND_S=$((DUR_S + 30))
want() { [[ " $SECTIONS " == *" $1 "* ]]; }
die() { echo "peers.sh: $*" >&2; exit 2; }

# Check every requested section's peers before measuring anything.
case $ARENA_CLIENT in wrk | gcannon) ;; *) die "ARENA_CLIENT must be wrk or gcannon" ;; esac
want tfb && { [ -x "$LIBREACTOR_BIN" ] || die "no libreactor at $LIBREACTOR_BIN (LIBREACTOR_BIN)"; }
if want arena; then
  for b in rust-epoll ringzero libreactorng gcannon; do
    [ -x "$ARENA_BIN/$b" ] || die "no $b in $ARENA_BIN (ARENA_BIN)"
  done
fi
for c in wrk curl ab nginx; do command -v $c >/dev/null || die "needs $c"; done
mkdir -p "$OUT/raw"
TMP=$(mktemp -d /tmp/twelve-peers.XXXXXX)
chmod 755 "$TMP"   # nginx's worker runs as nobody

. "$ROOT/bench/common.sh"
EXTRA_PIDS=()
CAPPED=()
stop_extra() { # the servers started here rather than by common.sh or a starter script
  local p
  for p in "${EXTRA_PIDS[@]}"; do
    if kill "$p" 2>/dev/null; then wait "$p" 2>/dev/null || true; fi
  done
  EXTRA_PIDS=()
}
cleanup() {
  resume_others
  [ ${#CAPPED[@]} -eq 0 ] || "$ROOT/bench/cpu-quota.sh" off "${CAPPED[@]}" >/dev/null 2>&1 || true
  stop_servers
  stop_extra
  BIN=$ARENA_BIN "$ARENA/start.sh" stop >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
trap cleanup EXIT
ulimit -n "$(ulimit -Hn)"
cap() { CAPPED=("$@"); "$ROOT/bench/cpu-quota.sh" 50 "$@" >> "$OUT/raw/quota.log"; }
uncap() { "$ROOT/bench/cpu-quota.sh" off "${CAPPED[@]}" >> "$OUT/raw/quota.log"; CAPPED=(); }
# The fixed section with FIXED_CAP=0 leaves its servers uncapped (the rate is still the capped
# peak's share): a server that is never throttled wakes up for every few requests.
fixed_cap() { if [ "$FIXED_CAP" = 1 ]; then cap "$@"; fi; }
fixed_uncap() { if [ "$FIXED_CAP" = 1 ]; then uncap; fi; }
wait_for() { # URL: until it answers (10 s at most)
  for _ in $(seq 50); do curl -sf -o /dev/null "$1" && return 0; sleep 0.2; done
  echo "peers.sh: nothing answers $1" >&2; return 1
}

# twelve serve on the io_uring backend beside the epoll one (IO_AB=1): PATH to wait for, then
# any extra serve flags. Appends its target to URING_TARGET (empty with IO_AB=0).
URING_TARGET=()
start_uring() { # PATH [FLAG...]
  local path=$1
  shift
  URING_TARGET=()
  [ "$IO_AB" = 1 ] || return 0
  taskset -c 0 "$BIN" serve --listen "127.0.0.1:$URING_PORT" --cpus 0 --io uring "$@" \
    > "$OUT/raw/twelve-uring-serve.log" 2>&1 &
  EXTRA_PIDS+=($!)
  wait_for "http://127.0.0.1:$URING_PORT$path"
  URING_TARGET=("twelve-uring=$URING_PORT")
}

COLS=(test name round requests rps errors client_cpu_s srv_cpu_s)
header() { (IFS=$'\t'; echo "${COLS[*]}") > "$1"; }

# Utime + stime, in seconds, of every process holding the listening socket on port $1.
srv_cpu() {
  local hz pids p sum=0 f
  hz=$(getconf CLK_TCK)
  pids=$(ss -Hltnp "sport = :$1" | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u)
  for p in $pids; do
    f=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null) || continue
    sum=$((sum + $(awk '{print $12 + $13}' <<< "$f")))
  done
  awk -v t="$sum" -v hz="$hz" 'BEGIN {printf "%.3f", t / hz}'
}

# The client command for TEST against PORT for SECONDS, pinned to CPU 1, bounded by timeout.
client() { # TEST PORT SECONDS
  local t=$1 u=http://127.0.0.1:$2 d=$3s R=$ARENA/requests
  local raw=(--raw "$R/get.raw,$R/post_cl.raw,$R/post_chunked.raw")
  local run=(timeout "$BOUND_S" taskset -c 1)
  case $t:$ARENA_CLIENT in
    # run.sh's wrk commands, bounded
    json:*) "${run[@]}" wrk -t1 -c"$TFB_CONNS" -d"$d" --timeout 5s --latency "${TFB_HDRS[@]}" "$u/json" ;;
    plaintext:*) "${run[@]}" wrk -t1 -c"$TFB_CONNS" -d"$d" --timeout 5s --latency "${TFB_HDRS[@]}" \
                   -s "$ROOT/bench/pipeline.lua" "$u/plaintext" -- 16 ;;
    baseline:wrk) "${run[@]}" wrk -t1 -c"$ARENA_CONNS" -d"$d" --timeout 5s -s "$ARENA/arena.lua" "$u" ;;
    pipelined:wrk) "${run[@]}" wrk -t1 -c"$ARENA_CONNS" -d"$d" --timeout 5s -s "$ARENA/arena.lua" "$u" -- pipeline 16 ;;
    baseline:gcannon) "${run[@]}" "$ARENA_BIN/gcannon" "$u" "${raw[@]}" -c "$ARENA_CONNS" -t 1 -d "$d" -p 1 --json ;;
    pipelined:gcannon) "${run[@]}" "$ARENA_BIN/gcannon" "$u/pipeline" -c "$ARENA_CONNS" -t 1 -d "$d" -p 16 --json ;;
    limited-conn:*) "${run[@]}" "$ARENA_BIN/gcannon" "$u" "${raw[@]}" -c "$ARENA_CONNS" -t 1 -d "$d" -p 1 -r 10 --json ;;
    # -t ends the run; -n, given after it (-t sets it to 50000), only sizes ab's table of
    # per-request records at 200k req/s, far above what one ab reaches
    static-keepalive:*) "${run[@]}" ab -q -k -c "$AB_C" -t "$3" -n $(($3 * 200000)) "$u/10k.dat" ;;
    static-close:*) "${run[@]}" ab -q -c "$AB_C" -t "$3" -n $(($3 * 200000)) "$u/10k.dat" ;;
    # twelve bench's open model at RATE (set by the fixed section), uniform arrivals
    json-fixed:*) "${run[@]}" "$BIN" bench "$u/json" -R "$RATE" -c "$FIXED_CONNS" -d "$d" \
                    --warmup 0 --cpus 1 --json ;;
    baseline-fixed:*) "${run[@]}" "$BIN" bench "$u/baseline11?a=13&b=42" -R "$RATE" \
                        -c "$FIXED_CONNS" -d "$d" --warmup 0 --cpus 1 --json ;;
    *) die "no client for $t" ;;
  esac
}
# "requests rps errors" from a client's output: wrk, gcannon --json (2xx responses only, as
# HttpArena counts) or ab. Errors are socket errors, non-2xx answers and ab's failures.
counts() { # FILE
  if grep -q '"twelve-bench-report' "$1"; then
    # The report is the JSON among twelve bench's progress lines and warnings (stderr, merged here).
    python3 -c 'import json, sys; t = open(sys.argv[1]).read(); d = json.JSONDecoder().raw_decode(t, t.index("{"))[0]
print(d["requests"], d["rps"], d["errors"]["total"])' "$1"
  elif grep -q '"version"' "$1"; then
    python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); s = d["status"]
print(s["2xx"], d["rps"], d["responses"] - s["2xx"] + sum(d["errors"].values()))' "$1"
  elif grep -q '^Requests per second' "$1"; then
    awk '/^Complete requests/ {n = $3} /^Requests per second/ {r = $4}
      /^Failed requests/ {e += $3} /^Non-2xx responses/ {e += $3} END {print n, r, e + 0}' "$1"
  else
    awk '/requests in/ {n = $1} /^Requests\/sec/ {r = $2}
      /Socket errors/ {gsub(/,/, ""); e += $4 + $6 + $8 + $10} /Non-2xx/ {e += $NF}
      END {print n, r, e + 0}' "$1"
  fi
}
# The processes holding the listening socket on each port given.
listener_pids() { # PORT...
  local port
  for port in "$@"; do
    ss -Hltnp "sport = :$port" | grep -o 'pid=[0-9]*' | cut -d= -f2
  done | sort -u
}
# Takes every server of a test but the one measured out of the capped cgroup for the length
# of its run, and puts them back after. The servers share one cap (cpu-quota.sh's cgroup), and
# an idle server is not always idle: ringzero's threads, with nothing to serve, used 12% to
# 28% of the shared cap while another server was under load (0.58 s of a 5 s run under
# twelve's, 0.70 s under libreactorng's; 3% with the CPU otherwise idle), which the measured
# server then lacked. Out of the cgroup they still share CPU 0, whose other half the capped
# server cannot use. Stopping them instead is no good: TechEmpower's libreactor shuts down
# when its worker is stopped or frozen.
CAP_CG=""
for d in /sys/fs/cgroup/cpu/benchsrv /sys/fs/cgroup/benchsrv; do
  if [ -d "${d%/*}" ] && [ -f "${d%/*}/cgroup.procs" ]; then CAP_CG=$d; break; fi
done
PAUSED=()
pause_others() { # PORT_MEASURED name=port...
  local keep=$1 target port p
  shift
  PAUSED=()
  [ -n "$CAP_CG" ] && [ -d "$CAP_CG" ] || return 0
  for target in "$@"; do
    port=${target##*=}
    [ "$port" = "$keep" ] && continue
    mapfile -t -O "${#PAUSED[@]}" PAUSED < <(listener_pids "$port")
  done
  for p in "${PAUSED[@]}"; do echo "$p" > "${CAP_CG%/*}/cgroup.procs" 2>/dev/null || true; done
}
resume_others() {
  local p
  for p in "${PAUSED[@]}"; do echo "$p" > "$CAP_CG/cgroup.procs" 2>/dev/null || true; done
  PAUSED=()
}
# Interleaved rounds of TEST over name=port targets; one TSV row per measured run.
measure() { # TSV TEST ROUNDS name=port...
  local tsv=$1 t=$2 rounds=$3 r target name port f s0 s1 u s n rps e rc
  shift 3
  TIMEFORMAT='%U %S'
  for ((r = 1; r <= rounds; r++)); do
    for target in "$@"; do
      name=${target%%=*}; port=${target##*=}
      f="$OUT/raw/$t-$name-$r.txt"
      pause_others "$port" "$@"
      client "$t" "$port" "$WARM_S" > /dev/null 2>&1 || true   # warm-up, not measured
      sleep 1
      s0=$(srv_cpu "$port")
      # gcannon exits 1 when it saw a non-2xx answer (ringzero's 4xx): counted as errors below
      rc=0
      { time client "$t" "$port" "$DUR_S" > "$f" 2>&1; } 2> "$f.time" || rc=$?
      if [ $rc -gt 1 ]; then
        echo "peers.sh: $t against $name, round $r, exited $rc: see $f" >&2; exit 1
      fi
      s1=$(srv_cpu "$port")
      resume_others
      read -r u s < "$f.time"
      read -r n rps e < <(counts "$f") || true
      if [ -z "$n" ] || [ "$n" = 0 ]; then echo "peers.sh: no request count in $f" >&2; exit 1; fi
      printf '%s\t%s\t%d\t%s\t%s\t%s\t%.3f\t%.3f\n' "$t" "$name" "$r" "$n" "$rps" "$e" \
        "$(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}')" \
        "$(awk -v a="$s0" -v b="$s1" 'BEGIN {print b - a}')" >> "$tsv"
    done
  done
}

{
  echo "# twelve against its peers: TechEmpower, HttpArena, static file"
  echo
  echo "- date: $(date -u +%FT%TZ)"
  echo "- twelve: $("$BIN" --version | head -1)"
  echo "- tree: $(cd "$ROOT" && git describe --always --dirty --abbrev=12)"
  echo "- kernel: $(uname -r)"
  echo "- cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) online"
  echo "- pinning: every server on CPU 0 with one worker, capped at 50% of a core"
  echo "  (cpu-quota.sh: 5 ms per 10 ms period; FIXED_CAP=$FIXED_CAP: the fixed section's"
  echo "  servers $([ "$FIXED_CAP" = 1 ] && echo capped too || echo uncapped)); the client on CPU 1, one thread"
  echo "- rounds interleaved across the servers of each test; ${DURATION} runs, each after a"
  echo "  ${WARMUP} warm-up run of the same client; client CPU from bash \`time\` around the"
  echo "  client, server CPU from /proc/PID/stat of every process holding the listener"
  echo "- command: \`SECTIONS=\"$SECTIONS\" ROUNDS=$ROUNDS PIPE_ROUNDS=$PIPE_ROUNDS DURATION=$DURATION" \
    "WARMUP=$WARMUP TFB_CONNS=$TFB_CONNS ARENA_CONNS=$ARENA_CONNS AB_C=$AB_C" \
    "ARENA_CLIENT=$ARENA_CLIENT COALESCE=$COALESCE FIXED_CAP=$FIXED_CAP bench/peers.sh\`"
  echo "- clients: $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2); $(ab -V | head -1)"
  echo "- peer binaries (sha256, first 16 hex):"
  for b in "$LIBREACTOR_BIN" "$ARENA_BIN"/{rust-epoll,ringzero,libreactorng,gcannon}; do
    [ -x "$b" ] && echo "  - $b $(sha256sum "$b" | cut -c1-16)"
  done
  echo "  - $(nginx -v 2>&1)"
} > "$OUT/README.md"

# tfb: twelve serve vs libreactor.
if want tfb; then
  echo "== tfb: json and plaintext, twelve serve vs libreactor" >&2
  start_servers /json libreactor
  start_uring /json
  cap "$PORT" 8086 ${URING_TARGET[@]+"$URING_PORT"}
  tsv=$OUT/tfb.tsv
  header "$tsv"
  targets=("twelve=$PORT" ${URING_TARGET[@]+"${URING_TARGET[@]}"} libreactor=8086)
  measure "$tsv" json "$ROUNDS" "${targets[@]}"
  measure "$tsv" plaintext "$PIPE_ROUNDS" "${targets[@]}"
  uncap
  stop_servers
  stop_extra
fi

# arena: twelve-engine's httparena example vs HttpArena's three fastest engines.
if want arena; then
  if [ ! -f "$ROOT/crates/engine/examples/httparena.rs" ]; then
    {
      echo
      echo "################################################################################"
      echo "## peers.sh: SKIPPING the HttpArena section: crates/engine/examples/httparena.rs"
      echo "## does not exist yet, so twelve has nothing to serve /baseline11 and /pipeline."
      echo "################################################################################"
      echo
    } | tee -a "$OUT/README.md" >&2
    rm -f "$OUT/arena.tsv"
  else
    echo "== arena: baseline, pipelined, limited-conn; twelve vs rust-epoll, ringzero, libreactorng" >&2
    (cd "$ROOT" && RUSTFLAGS="-C target-cpu=native" cargo build -q --profile bench-bin \
      -p twelve-engine --example httparena)
    taskset -c 0 "$ROOT/target/bench-bin/examples/httparena" "127.0.0.1:$ARENA_PORT" \
      > "$OUT/raw/twelve-httparena.log" 2>&1 &
    EXTRA_PIDS+=($!)
    uring=()
    if [ "$IO_AB" = 1 ]; then
      TWELVE_IO=uring taskset -c 0 "$ROOT/target/bench-bin/examples/httparena" \
        "127.0.0.1:$ARENA_URING_PORT" > "$OUT/raw/twelve-uring-httparena.log" 2>&1 &
      EXTRA_PIDS+=($!)
      uring=("twelve-uring=$ARENA_URING_PORT")
    fi
    BIN=$ARENA_BIN SERVER_CPU=0 "$ARENA/start.sh" > "$OUT/raw/arena-start.log"
    targets=("twelve=$ARENA_PORT" ${uring[@]+"${uring[@]}"} rust-epoll=8091 ringzero=8092 libreactorng=8093)
    for t in "${targets[@]}"; do
      wait_for "http://127.0.0.1:${t##*=}/pipeline"
      # HttpArena's correctness checks, for the record (ringzero fails the 4 fragmentation ones)
      FRAG_TIMEOUT=1 timeout 60 "$ARENA/check.sh" "${t##*=}" > "$OUT/raw/check-${t%%=*}.txt" 2>&1 || true
    done
    cap "$ARENA_PORT" ${uring[@]+"$ARENA_URING_PORT"} 8091 8092 8093
    tsv=$OUT/arena.tsv
    header "$tsv"
    measure "$tsv" baseline "$ROUNDS" "${targets[@]}"
    measure "$tsv" pipelined "$PIPE_ROUNDS" "${targets[@]}"
    measure "$tsv" limited-conn "$ROUNDS" "${targets[@]}"
    uncap
    BIN=$ARENA_BIN "$ARENA/start.sh" stop >> "$OUT/raw/arena-start.log"
    stop_extra
  fi
fi

# static: a 10 KiB file, twelve serve --root vs nginx with sendfile.
if want static; then
  echo "== static: 10k.dat with ab -k and ab, twelve serve vs nginx" >&2
  mkdir -p "$TMP/www"
  head -c 10240 /dev/urandom > "$TMP/www/10k.dat"
  cat > "$TMP/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $TMP/nginx.pid;
error_log $TMP/nginx-error.log crit;
worker_rlimit_nofile 20000;
events { worker_connections 16000; use epoll; }
http {
    access_log off;
    server_tokens off;
    sendfile on;
    tcp_nodelay on;
    keepalive_requests 1000000000;
    default_type application/octet-stream;
    client_body_temp_path $TMP/body;
    proxy_temp_path $TMP/proxy;
    fastcgi_temp_path $TMP/fastcgi;
    uwsgi_temp_path $TMP/uwsgi;
    scgi_temp_path $TMP/scgi;
    server {
        listen 127.0.0.1:$NGINX_PORT reuseport backlog=4096;
        root $TMP/www;
    }
}
EOF
  cp "$TMP/nginx.conf" "$OUT/raw/nginx-static.conf"
  # nginx as a performance engineer would tune it for small files: open_file_cache keeps the
  # descriptors and their stat (nginx-ofc), the peer twelve's file cache must beat too.
  sed -e "s/listen 127.0.0.1:$NGINX_PORT /listen 127.0.0.1:$NGINX_OFC_PORT /" \
      -e "s#^pid .*#pid $TMP/nginx-ofc.pid;#" \
      -e 's/^    sendfile on;/    sendfile on;\n    open_file_cache max=1000 inactive=60s;\n    open_file_cache_valid 60s;/' \
      "$TMP/nginx.conf" > "$TMP/nginx-ofc.conf"
  cp "$TMP/nginx-ofc.conf" "$OUT/raw/nginx-ofc-static.conf"
  SERVE_ARGS=(--root "$TMP/www")
  start_servers /10k.dat
  SERVE_ARGS=()
  start_uring /10k.dat --root "$TMP/www"
  # The same binary without its file cache: every request opens and sendfiles the file.
  taskset -c 0 "$BIN" serve --listen "127.0.0.1:$NOCACHE_PORT" --cpus 0 --root "$TMP/www" \
    --file-cache 0 > "$OUT/raw/twelve-nocache-serve.log" 2>&1 &
  EXTRA_PIDS+=($!)
  taskset -c 0 nginx -p "$TMP" -e "$TMP/nginx-error.log" -c "$TMP/nginx.conf" \
    > "$OUT/raw/nginx-static.log" 2>&1 &
  EXTRA_PIDS+=($!)
  taskset -c 0 nginx -p "$TMP" -e "$TMP/nginx-error.log" -c "$TMP/nginx-ofc.conf" \
    > "$OUT/raw/nginx-ofc-static.log" 2>&1 &
  EXTRA_PIDS+=($!)
  for p in "$NGINX_PORT" "$NGINX_OFC_PORT" "$NOCACHE_PORT"; do
    wait_for "http://127.0.0.1:$p/10k.dat"
    cmp <(curl -s "http://127.0.0.1:$p/10k.dat") "$TMP/www/10k.dat"
  done
  cmp <(curl -s "http://127.0.0.1:$PORT/10k.dat") "$TMP/www/10k.dat"
  cap "$PORT" ${URING_TARGET[@]+"$URING_PORT"} "$NOCACHE_PORT" "$NGINX_PORT" "$NGINX_OFC_PORT"
  tsv=$OUT/static.tsv
  header "$tsv"
  targets=("twelve=$PORT" ${URING_TARGET[@]+"${URING_TARGET[@]}"} "twelve-nocache=$NOCACHE_PORT"
    "nginx=$NGINX_PORT" "nginx-ofc=$NGINX_OFC_PORT")
  measure "$tsv" static-keepalive "$ROUNDS" "${targets[@]}"
  measure "$tsv" static-close "$ROUNDS" "${targets[@]}"
  uncap
  stop_servers
  stop_extra
fi

# fixed: server CPU per request at FIXED_SHARE of the slowest server's capped peak, so that
# every server of the test can hold the rate below its cap: at 60% of the best peer's peak
# (this script's first rule), the 2026-11-26 run offered 80.7k req/s of baseline, above what
# three of the five servers answer capped, and every one of them spent exactly its cap.
# The lowest median req/s of any server for TEST in TSV, or nothing.
peak() { # TSV TEST
  [ -f "$1" ] || return 0
  python3 - "$1" "$2" <<'PY'
import csv, statistics as st, sys
rows = [r for r in csv.DictReader(open(sys.argv[1]), delimiter='\t') if r['test'] == sys.argv[2]]
med = {}
for r in rows:
    med.setdefault(r['name'], []).append(float(r['rps']))
if med:
    print(round(min(st.median(v) for v in med.values())))
PY
}
if want fixed; then
  json_peak=$(peak "$OUT/tfb.tsv" json); json_peak=${json_peak:-${FIXED_JSON_RATE:-}}
  arena_peak=$(peak "$OUT/arena.tsv" baseline); arena_peak=${arena_peak:-${FIXED_ARENA_RATE:-}}
  if [ -z "$json_peak" ] || [ -z "$arena_peak" ]; then
    die "fixed: run the tfb and arena sections first, or set FIXED_JSON_RATE and FIXED_ARENA_RATE"
  fi
  tsv=$OUT/fixed.tsv
  header "$tsv"
  printf 'test\toffered\tpeak\n' > "$OUT/fixed-rates.tsv"
  RATE=$(awk -v p="$json_peak" -v s="$FIXED_SHARE" 'BEGIN {printf "%d", p * s}')
  echo "== fixed: json at $RATE req/s ($FIXED_SHARE of $json_peak), twelve vs libreactor" >&2
  printf 'json-fixed\t%s\t%s\n' "$RATE" "$json_peak" >> "$OUT/fixed-rates.tsv"
  start_servers /json libreactor
  start_uring /json
  coalesced=()
  if [ -n "$COALESCE" ]; then
    taskset -c 0 "$BIN" serve --listen "127.0.0.1:$COALESCE_PORT" --cpus 0 --coalesce "$COALESCE" \
      > "$OUT/raw/twelve-coalesce-serve.log" 2>&1 &
    EXTRA_PIDS+=($!)
    wait_for "http://127.0.0.1:$COALESCE_PORT/json"
    coalesced=("twelve-coalesce=$COALESCE_PORT")
  fi
  fixed_cap "$PORT" 8086 ${URING_TARGET[@]+"$URING_PORT"} ${coalesced[@]+"$COALESCE_PORT"}
  measure "$tsv" json-fixed "$ROUNDS" "twelve=$PORT" ${URING_TARGET[@]+"${URING_TARGET[@]}"} \
    ${coalesced[@]+"${coalesced[@]}"} libreactor=8086
  fixed_uncap
  stop_servers
  stop_extra
  RATE=$(awk -v p="$arena_peak" -v s="$FIXED_SHARE" 'BEGIN {printf "%d", p * s}')
  echo "== fixed: GET /baseline11 at $RATE req/s ($FIXED_SHARE of $arena_peak), twelve vs HttpArena engines" >&2
  printf 'baseline-fixed\t%s\t%s\n' "$RATE" "$arena_peak" >> "$OUT/fixed-rates.tsv"
  (cd "$ROOT" && RUSTFLAGS="-C target-cpu=native" cargo build -q --profile bench-bin \
    -p twelve-engine --example httparena)
  taskset -c 0 "$ROOT/target/bench-bin/examples/httparena" "127.0.0.1:$ARENA_PORT" \
    > "$OUT/raw/twelve-httparena-fixed.log" 2>&1 &
  EXTRA_PIDS+=($!)
  uring=()
  if [ "$IO_AB" = 1 ]; then
    TWELVE_IO=uring taskset -c 0 "$ROOT/target/bench-bin/examples/httparena" \
      "127.0.0.1:$ARENA_URING_PORT" > "$OUT/raw/twelve-uring-httparena-fixed.log" 2>&1 &
    EXTRA_PIDS+=($!)
    uring=("twelve-uring=$ARENA_URING_PORT")
  fi
  coalesced=()
  if [ -n "$COALESCE" ]; then
    TWELVE_COALESCE_US=${COALESCE%us} taskset -c 0 "$ROOT/target/bench-bin/examples/httparena" \
      "127.0.0.1:$COALESCE_PORT" > "$OUT/raw/twelve-coalesce-httparena-fixed.log" 2>&1 &
    EXTRA_PIDS+=($!)
    coalesced=("twelve-coalesce=$COALESCE_PORT")
  fi
  BIN=$ARENA_BIN SERVER_CPU=0 "$ARENA/start.sh" >> "$OUT/raw/arena-start.log"
  targets=("twelve=$ARENA_PORT" ${uring[@]+"${uring[@]}"} ${coalesced[@]+"${coalesced[@]}"}
    rust-epoll=8091 ringzero=8092 libreactorng=8093)
  for t in "${targets[@]}"; do wait_for "http://127.0.0.1:${t##*=}/pipeline"; done
  fixed_cap "$ARENA_PORT" ${uring[@]+"$ARENA_URING_PORT"} ${coalesced[@]+"$COALESCE_PORT"} 8091 8092 8093
  measure "$tsv" baseline-fixed "$ROUNDS" "${targets[@]}"
  fixed_uncap
  BIN=$ARENA_BIN "$ARENA/start.sh" stop >> "$OUT/raw/arena-start.log"
  stop_extra
fi

python3 - "$OUT" "$SECTIONS" "$TFB_CONNS" "$ARENA_CONNS" "$ARENA_CLIENT" "$AB_C" "$DUR_S" \
  "$FIXED_CAP" > "$OUT/summary.md" <<'PY'
import csv, json, os, statistics as st, sys
out, sections, tc, ac, acl, abc, dur_s, fixed_cap = sys.argv[1], sys.argv[2].split(), *sys.argv[3:]
acl = 'wrk arena.lua' if acl == 'wrk' else acl
what = {
    'json': f'TFB json, keep-alive, wrk -c{tc}',
    'plaintext': f'TFB plaintext, pipelined 16, wrk -c{tc}',
    'baseline': f'HttpArena baseline, {acl} -c{ac}',
    'pipelined': f'HttpArena pipelined 16, {acl} -c{ac}',
    'limited-conn': f'HttpArena limited-conn, gcannon -c{ac} -r 10',
    'static-keepalive': f'10 KiB file, ab -k -c{abc}',
    'static-close': f'10 KiB file, ab -c{abc} (no keep-alive)',
}
fixed = {
    'json-fixed': 'TFB json at a fixed rate, twelve bench -R',
    'baseline-fixed': 'HttpArena GET /baseline11 at a fixed rate, twelve bench -R',
}
print("| test | server | runs | req/s median (min-max) | twelve ÷ server | client CPU µs/req "
      "| server CPU µs/req | errors |")
print("|---|---|---|---|---|---|---|---|")
for sec in ('tfb', 'arena', 'static'):
    fn = os.path.join(out, sec + '.tsv')
    if sec not in sections:
        continue
    if not os.path.exists(fn):
        print(f"| {sec}: SKIPPED (see README.md) | | | | | | | |")
        continue
    tests = {}
    for r in csv.DictReader(open(fn), delimiter='\t'):
        tests.setdefault(r['test'], {}).setdefault(r['name'], []).append(r)
    for t, by in tests.items():
        med = {n: st.median(float(r['rps']) for r in rs) for n, rs in by.items()}
        ours = lambda n: n.startswith('twelve')
        peers = {n: v for n, v in med.items() if not ours(n)}
        best = max(peers, key=peers.get) if peers else None
        for n, rs in sorted(by.items(), key=lambda kv: -med[kv[0]]):
            rps = [float(r['rps']) for r in rs]
            per = lambda k: st.median(1e6 * float(r[k]) / float(r['requests']) for r in rs)
            if not ours(n):
                ratio = f"{med['twelve'] / med[n]:.3f}" if 'twelve' in med else ''
            else:
                ratio = f"**{med[n] / med[best]:.3f}** ÷ best ({best})" if best else ''
                if n != 'twelve' and 'twelve' in med:
                    ratio += f"; {med[n] / med['twelve']:.3f} × twelve (epoll)"
            print(f"| {what.get(t, t)} | {n} | {len(rs)} | {med[n]:,.0f} ({min(rps):,.0f}-{max(rps):,.0f}) "
                  f"| {ratio} | {per('client_cpu_s'):.2f} | {per('srv_cpu_s'):.2f} "
                  f"| {sum(int(float(r['errors'])) for r in rs)} |")
print("\nMedians over the rounds; ratios are of medians. CPU per request: the run's CPU time "
      "over the requests the client counted (the server is capped at 50% of a core).")
fn = os.path.join(out, 'fixed.tsv')
if 'fixed' in sections and os.path.exists(fn):
    print("\n| test | server | runs | offered req/s | achieved ÷ offered (min) | server CPU µs/req "
          "median (min-max) | twelve ÷ best peer (CPU/req) | latency p50 / p99 µs | errors |")
    print("|---|---|---|---|---|---|---|---|---|")

    def latency(t, n, rnd):
        # twelve bench's report in the raw output: corrected latency (from the schedule).
        try:
            text = open(os.path.join(out, 'raw', f'{t}-{n}-{rnd}.txt')).read()
            d = json.JSONDecoder().raw_decode(text, text.index('{'))[0]
            c = d['latency']['corrected']
            return c['p50_us'], c['p99_us']
        except (OSError, ValueError, KeyError):
            return None
    tests = {}
    for r in csv.DictReader(open(fn), delimiter='\t'):
        tests.setdefault(r['test'], {}).setdefault(r['name'], []).append(r)
    rates = {r['test']: r for r in csv.DictReader(open(os.path.join(out, 'fixed-rates.tsv')),
                                                  delimiter='\t')}
    for t, by in tests.items():
        offered = float(rates[t]['offered'])
        cpu = {n: st.median(1e6 * float(r['srv_cpu_s']) / float(r['requests']) for r in rs)
               for n, rs in by.items()}
        peers = {n: v for n, v in cpu.items() if not n.startswith('twelve')}
        best = min(peers, key=peers.get) if peers else None
        for n, rs in sorted(by.items(), key=lambda kv: cpu[kv[0]]):
            held = min(float(r['rps']) / offered for r in rs)
            per = [1e6 * float(r['srv_cpu_s']) / float(r['requests']) for r in rs]
            ratio = f"**{cpu[n] / cpu[best]:.3f}** ({best})" if n.startswith('twelve') and best else ''
            flag = '' if held >= 0.95 else ' NOT HELD'
            # A server that spent 90% of its cap or more answered at its limit, not at a rate
            # it chose: its CPU per request is the cap's, and says nothing of its cost.
            if fixed_cap == '1' and max(float(r['srv_cpu_s']) for r in rs) >= 0.9 * 0.5 * float(dur_s):
                flag += ' AT CAP'
            lat = [x for x in (latency(t, n, r['round']) for r in rs) if x]
            lat = (f"{st.median(a for a, _ in lat):.0f} / {st.median(b for _, b in lat):.0f}"
                   if lat else '')
            print(f"| {fixed[t]} | {n} | {len(rs)} | {offered:,.0f} | {held:.3f}{flag} "
                  f"| {cpu[n]:.2f} ({min(per):.2f}-{max(per):.2f}) | {ratio} | {lat} "
                  f"| {sum(int(float(r['errors'])) for r in rs)} |")
    print("\nOffered rate: FIXED_SHARE of the slowest server's capped peak (fixed-rates.tsv). The "
          "rate is held when every round achieved at least 95% of it; AT CAP marks a server that "
          "spent 90% of its cap or more in a round; server CPU is utime + stime of "
          "the listening process over the run; latency is twelve bench's corrected latency "
          "(from each request's scheduled time), medians over the rounds.")
PY
cat "$OUT/summary.md"

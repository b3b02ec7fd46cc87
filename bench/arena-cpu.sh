#!/usr/bin/env bash
# bench/arena-cpu.sh - HttpArena's CPU-bound HTTP/1.1 profiles, issue 35's comparison: twelve-engine's httparena
# example against HttpArena's actix entry (its leading Rust entry in each of these profiles: the only Rust entry
# subscribed to json, json-comp and upload, and the leading one in static) and, for static, nginx configured as
# HttpArena's nginx entry serves its files (gzip_static and brotli_static from disk). Every server pinned to CPU 0
# with one worker and capped at 50% of a core (cpu-quota.sh), wrk on CPU 1 with bench/peers/arena/cpu.lua, rounds
# interleaved across the servers (A B C A B C ...), medians quoted. The figure is requests per server CPU-second.
#
#   json       GET /json/{count}?m= over the seven (count, m) pairs, no Accept-Encoding
#   json-comp  the same over three pairs with Accept-Encoding: gzip, br (bytes per response recorded too: HttpArena
#              scores this profile by rps x (smallest bytes per response / own)^2)
#   json-tls   the json rotation over HTTP/1.1 + TLS (wrk's OpenSSL, no ALPN offered, as in HttpArena): the example's
#              json-tls listener (TLS_H1_LISTEN; ALPN http/1.1 alone, as the profile asks) against actix's TLS listener
#              (0.0.0.0:8443, the one HttpArena's actix entry opens for its h2 profiles; ALPN h2 only, so HTTP/1.1 for
#              a client that offers none). No Rust entry of HttpArena subscribes to json-tls (its leader is ngx-php);
#              actix leads the plain json profile.
#              Certificates: TLS_CERT/TLS_KEY, else a P-256 self-signed pair made with openssl for the run.
#   upload     POST /upload of 500 KB, 2 MB, 10 MB and 20 MB bodies, rotating every 5 requests
#   static     the static profile's 20 files with Accept-Encoding: br;q=1, gzip;q=0.8
#
# The peers are built outside the repository (bench/peers/README.md): actix from HttpArena's frameworks/actix with
# three lines changed so that PORT, WORKERS and STATIC_DIR come from the environment (it reads DATASET_PATH
# already); nginx is Debian's with libnginx-mod-http-brotli-static. The data is HttpArena's data/ (dataset.json and
# static/, MIT): `git archive` it from a clone of HttpArena into ARENA_DATA.
#
# Usage: bench/arena-cpu.sh [OUTDIR]        (default bench/runs/<date>-arena-cpu)
# Env:   TESTS="json json-comp json-tls upload static"  ROUNDS=3  DURATION=10s  WARMUP=2s  CAP=50 (percent of a core)
#        CONNS_JSON=512 CONNS_COMP=512 CONNS_TLS=512 CONNS_UPLOAD=32 CONNS_STATIC=1024
#        ARENA_DATA=/tmp/arena-data/data  ACTIX_ARENA_BIN=/tmp/peers/actix/target/release/httparena-actix
#        TWELVE_PORT=8101 ACTIX_PORT=8102 NGINX_PORT=8103 TWELVE_TLS_PORT=8104 (actix's TLS port is its own: 8443)
#        TLS_CERT TLS_KEY  CLIENT_SCHED=other|fifo (fifo: wrk under SCHED_FIFO priority 1, so that a host busy with other
#        work does not starve the client; the servers stay in the default class, where their cgroup cap applies)
# Writes OUTDIR/README.md (machine, versions, command), raw/ (wrk output, server logs, the checks), cpu.tsv (one row
# per measured run) and summary.md (the table). Needs root (cgroup CPU cap), Debian's wrk and nginx, curl, cargo.
# Every process it starts is stopped by PID on exit; every load run is bounded by wrk's duration and `timeout`.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/bench/runs/$(date +%F)-arena-cpu}
TESTS=${TESTS:-json json-comp json-tls upload static}
ROUNDS=${ROUNDS:-3}; DURATION=${DURATION:-10s}; WARMUP=${WARMUP:-2s}; CAP=${CAP:-50}
CONNS_JSON=${CONNS_JSON:-512}; CONNS_COMP=${CONNS_COMP:-512}; CONNS_UPLOAD=${CONNS_UPLOAD:-32}
CONNS_STATIC=${CONNS_STATIC:-1024}; CONNS_TLS=${CONNS_TLS:-512}
DATA=${ARENA_DATA:-/tmp/arena-data/data}
ACTIX=${ACTIX_ARENA_BIN:-/tmp/peers/actix/target/release/httparena-actix}
TWELVE_PORT=${TWELVE_PORT:-8101}; ACTIX_PORT=${ACTIX_PORT:-8102}; NGINX_PORT=${NGINX_PORT:-8103}
TWELVE_TLS_PORT=${TWELVE_TLS_PORT:-8104}; ACTIX_TLS_PORT=8443
CLIENT_SCHED=${CLIENT_SCHED:-other}
case $CLIENT_SCHED in
  fifo) CLIENT_RUN=(chrt -f 1) ;;
  other) CLIENT_RUN=() ;;
  *) echo "arena-cpu.sh: CLIENT_SCHED=$CLIENT_SCHED: expected other or fifo" >&2; exit 2 ;;
esac
LUA=$ROOT/bench/peers/arena/cpu.lua
die() { echo "arena-cpu.sh: $*" >&2; exit 1; }
[ -f "$DATA/dataset.json" ] && [ -d "$DATA/static" ] || die "no HttpArena data at $DATA (ARENA_DATA)"
[ -x "$ACTIX" ] || die "no actix build at $ACTIX (ACTIX_ARENA_BIN; bench/peers/README.md)"
[ -f /usr/lib/nginx/modules/ngx_http_brotli_static_module.so ] \
  || die "nginx's brotli_static module is missing: apt-get install libnginx-mod-http-brotli-static"
mkdir -p "$OUT/raw"
if [ -z "${TLS_CERT:-}" ]; then
  # Outside OUT: a run's raw data never holds a private key.
  TLS_DIR=$(mktemp -d /tmp/arena-cpu-tls.XXXXXX)
  TLS_CERT=$TLS_DIR/server.crt; TLS_KEY=$TLS_DIR/server.key
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 7 -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout "$TLS_KEY" -out "$TLS_CERT" 2> /dev/null
fi
TREE=$(cd "$ROOT" && git describe --always --dirty --abbrev=12)

(cd "$ROOT" && RUSTFLAGS="-C target-cpu=native" cargo build -q --profile bench-bin -p twelve-engine \
  --example httparena)
TWELVE=$ROOT/target/bench-bin/examples/httparena

PIDS=()
stop_all() {
  [ -n "${TLS_DIR:-}" ] && rm -rf "$TLS_DIR"
  "$ROOT/bench/cpu-quota.sh" off "$TWELVE_PORT" "$ACTIX_PORT" "$NGINX_PORT" > /dev/null 2>&1 || true
  local p
  for p in ${PIDS[@]+"${PIDS[@]}"}; do kill "$p" 2>/dev/null || true; done
  for p in ${PIDS[@]+"${PIDS[@]}"}; do wait "$p" 2>/dev/null || true; done
  PIDS=()
}
trap stop_all EXIT
ulimit -n "$(ulimit -Hn)"

wait_for() { # URL
  for _ in $(seq 100); do curl -skf --no-alpn -o /dev/null "$1" && return 0; sleep 0.1; done
  die "nothing answers $1"
}

start_all() {
  DATASET=$DATA/dataset.json STATIC_DIR=$DATA/static TLS_CERT=$TLS_CERT TLS_KEY=$TLS_KEY \
    TLS_H1_LISTEN=127.0.0.1:$TWELVE_TLS_PORT taskset -c 0 "$TWELVE" "127.0.0.1:$TWELVE_PORT" \
    > "$OUT/raw/twelve.log" 2>&1 &
  PIDS+=($!)
  PORT=$ACTIX_PORT WORKERS=1 DATASET_PATH=$DATA/dataset.json STATIC_DIR=$DATA/static TLS_CERT=$TLS_CERT \
    TLS_KEY=$TLS_KEY taskset -c 0 "$ACTIX" \
    > "$OUT/raw/actix.log" 2>&1 &
  PIDS+=($!)
  mkdir -p /tmp/arena-cpu-nginx
  sed -e "s|@PORT@|$NGINX_PORT|" -e "s|@DATA@|$DATA|" "$ROOT/bench/peers/nginx-arena.conf" \
    > /tmp/arena-cpu-nginx/nginx.conf
  taskset -c 0 nginx -p /tmp/arena-cpu-nginx -e /tmp/arena-cpu-nginx/error.log \
    -c /tmp/arena-cpu-nginx/nginx.conf > "$OUT/raw/nginx.log" 2>&1 &
  PIDS+=($!)
  wait_for "http://127.0.0.1:$TWELVE_PORT/json/1?m=1"
  wait_for "http://127.0.0.1:$ACTIX_PORT/json/1?m=1"
  wait_for "http://127.0.0.1:$NGINX_PORT/static/reset.css"
  wait_for "https://127.0.0.1:$TWELVE_TLS_PORT/json/1?m=1"
  wait_for "https://127.0.0.1:$ACTIX_TLS_PORT/json/1?m=1"
  "$ROOT/bench/cpu-quota.sh" "$CAP" "$TWELVE_PORT" "$ACTIX_PORT" "$NGINX_PORT" > "$OUT/raw/cap.log"
}

# What each server answers, once, before any load (the bench would count wrong answers as requests).
checks() { # name port tls-port curl's-alpn-flag
  local u=http://127.0.0.1:$2
  {
    echo "== $1"
    echo "json/12?m=3: $(curl -s "$u/json/12?m=3" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["count"], all(i["total"]==i["price"]*i["quantity"]*3 for i in d["items"]))')"
    echo "json-comp: $(curl -s -o /dev/null -D- -H 'Accept-Encoding: gzip, br' "$u/json/50?m=2" | grep -i '^content-encoding' | tr -d '\r')"
    echo "json-tls 23?m=11: $(curl -sk "$4" -w ' HTTP/%{http_version}' "https://127.0.0.1:$3/json/23?m=11" | python3 -c 'import json,sys; b,v=sys.stdin.read().rsplit(" ",1); d=json.loads(b); print(v, d["count"], all(i["total"]==i["price"]*i["quantity"]*11 for i in d["items"]))')"
    echo "upload 2 MiB: $(head -c 2097152 /dev/zero | curl -s -X POST --data-binary @- "$u/upload")"
    echo "static app.js br: $(curl -s -o /dev/null -w '%{http_code} %{size_download}' -H 'Accept-Encoding: br;q=1, gzip;q=0.8' "$u/static/app.js")"
  } >> "$OUT/raw/checks.txt" 2>&1
}

. "$ROOT/bench/ticks.sh"
# The CPU ticks of every process holding the listener on PORT.
srv_ticks() { # shellcheck disable=SC2046
  ticks $(pids_on "$1"); }

conns() {
  case $1 in
    json) echo "$CONNS_JSON" ;; json-comp) echo "$CONNS_COMP" ;;
    upload) echo "$CONNS_UPLOAD" ;; static) echo "$CONNS_STATIC" ;; json-tls) echo "$CONNS_TLS" ;;
  esac
}

wrk_run() { # test port duration
  local scheme=http
  [ "$1" = json-tls ] && scheme=https
  timeout $(( ${3%s} + 30 )) "${CLIENT_RUN[@]}" taskset -c 1 wrk -t1 -c"$(conns "$1")" -d"$3" --latency -s "$LUA" \
    "$scheme://127.0.0.1:$2" -- "$1"
}

# wrk's counts: requests, bytes read, non-2xx, socket errors.
counts() { # file
  python3 - "$1" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r'(\d+) requests in [\d.]+\w+, ([\d.]+)(\w+) read', t)
unit = {'B': 1, 'KB': 1024, 'MB': 1024**2, 'GB': 1024**3, 'TB': 1024**4}
non2xx = re.search(r'Non-2xx or 3xx responses: (\d+)', t)
errs = re.search(r'Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)', t)
print(m.group(1), int(float(m.group(2)) * unit[m.group(3)]), int(non2xx.group(1)) if non2xx else 0,
      sum(map(int, errs.groups())) if errs else 0)
PY
}

printf 'test\tserver\tround\trequests\tbytes\tnon2xx\tsocket_errors\tsrv_cpu_s\treq_per_srv_cpu_s\tbytes_per_req\n' \
  > "$OUT/cpu.tsv"
start_all
# validate.sh asks twelve's json-tls port with curl --http1.1 (ALPN http/1.1); actix's TLS port offers h2 alone
# in ALPN, so it is asked as wrk asks, with no ALPN.
checks twelve "$TWELVE_PORT" "$TWELVE_TLS_PORT" --http1.1; checks actix "$ACTIX_PORT" "$ACTIX_TLS_PORT" --no-alpn
for t in $TESTS; do
  targets=("twelve=$TWELVE_PORT" "actix=$ACTIX_PORT")
  [ "$t" = json-tls ] && targets=("twelve=$TWELVE_TLS_PORT" "actix=$ACTIX_TLS_PORT")
  [ "$t" = static ] && targets+=("nginx=$NGINX_PORT")
  echo "== $t: ${targets[*]}, $ROUNDS rounds of $DURATION, wrk -c$(conns "$t")" >&2
  for ((r = 1; r <= ROUNDS; r++)); do
    for target in "${targets[@]}"; do
      name=${target%%=*}; port=${target##*=}
      f=$OUT/raw/$t-$name-$r.txt
      wrk_run "$t" "$port" "$WARMUP" > /dev/null 2>&1 || true
      t0=$(srv_ticks "$port")
      wrk_run "$t" "$port" "$DURATION" > "$f" 2>&1
      t1=$(srv_ticks "$port")
      read -r n bytes bad errs < <(counts "$f")
      awk -v t="$t" -v s="$name" -v r="$r" -v n="$n" -v b="$bytes" -v bad="$bad" -v e="$errs" \
        -v ticks=$((t1 - t0)) -v hz="$HZ" 'BEGIN {
          cpu = ticks / hz; printf "%s\t%s\t%d\t%.0f\t%.0f\t%d\t%d\t%.2f\t%.0f\t%.0f\n",
          t, s, r, n, b, bad, e, cpu, (cpu > 0 ? n / cpu : 0), b / n }' >> "$OUT/cpu.tsv"
      tail -n 1 "$OUT/cpu.tsv" >&2
    done
  done
done
stop_all

{
  echo "# HttpArena's CPU-bound profiles: twelve vs actix (and nginx for static)"
  echo
  echo "- date: $(date -u +%FT%TZ)"
  echo "- tree: $TREE (at the start)"
  echo "- kernel: $(uname -r)"
  echo "- cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) online"
  echo "- pinning: every server on CPU 0 with one worker, capped at $CAP% of a core (cpu-quota.sh); wrk on CPU 1,"
  echo "  one thread, scheduling $CLIENT_SCHED; rounds interleaved; each run after a $WARMUP warm-up; server CPU from /proc/PID/stat"
  echo "- command: \`TESTS=\"$TESTS\" ROUNDS=$ROUNDS DURATION=$DURATION WARMUP=$WARMUP CAP=$CAP" \
    "CONNS_JSON=$CONNS_JSON CONNS_COMP=$CONNS_COMP CONNS_TLS=$CONNS_TLS CONNS_UPLOAD=$CONNS_UPLOAD CONNS_STATIC=$CONNS_STATIC" \
    "CLIENT_SCHED=$CLIENT_SCHED bench/arena-cpu.sh\`"
  echo "- servers: twelve-engine's httparena example (bench-bin, target-cpu=native; compression defaults gzip 1,"
  echo "  br 3, zstd 1), actix $(sha256sum "$ACTIX" | cut -c1-16) (HttpArena 28606ba frameworks/actix, PORT/WORKERS/"
  echo "  STATIC_DIR from the environment), $(nginx -v 2>&1) with bench/peers/nginx-arena.conf"
  echo "- client: $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2) with bench/peers/arena/cpu.lua"
} > "$OUT/README.md"

python3 - "$OUT/cpu.tsv" "${DURATION%s}" > "$OUT/summary.md" <<'PY'
import csv, statistics as st, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter='\t'))
dur = float(sys.argv[2])
tests = {}
for r in rows:
    tests.setdefault(r['test'], {}).setdefault(r['server'], []).append(r)
print("| test | server | runs | req per server CPU-s, median (min-max) | twelve ÷ server | req/s median "
      "| bytes/response | non-2xx + errors |")
print("|---|---|---|---|---|---|---|---|")
for t, by in tests.items():
    eff = {s: st.median(float(r['req_per_srv_cpu_s']) for r in rs) for s, rs in by.items()}
    for s, rs in sorted(by.items(), key=lambda kv: -eff[kv[0]]):
        e = [float(r['req_per_srv_cpu_s']) for r in rs]
        rps = st.median(int(r['requests']) / dur for r in rs)
        bpr = st.median(float(r['bytes_per_req']) for r in rs)
        bad = sum(int(r['non2xx']) + int(r['socket_errors']) for r in rs)
        ratio = '' if s == 'twelve' else f"{eff['twelve'] / eff[s]:.3f}"
        print(f"| {t} | {s} | {len(rs)} | {eff[s]:,.0f} ({min(e):,.0f}-{max(e):,.0f}) | {ratio} "
              f"| {rps:,.0f} | {bpr:,.0f} | {bad} |")
print("\nreq/s: the requests wrk counted over the run's duration; bytes/response: what wrk read over the requests, "
      "heads included; server CPU: utime + stime of every process holding the listener over the run.")
PY
cat "$OUT/summary.md"

#!/usr/bin/env bash
# bench/h2.sh - issue 31's benchmark: HTTP/2 servers, each pinned to CPU 0 with one worker
# and capped at half of it (bench/cpu-quota.sh), h2load on CPU 1, interleaved rounds:
# `twelve serve` against h2o and nginx (Debian's packages). Cells: h2c with prior knowledge
# and h2 over TLS (ALPN), `-c 64` with `-m 1`, `-m 10` and `-m 100`, on /plaintext
# (HttpArena's baseline-h2 and baseline-h2c shape: a small constant body); and static-h2, a
# 10 KiB file over TLS. Metric: requests per server CPU-second (user + system of the server's
# processes), medians over rounds; req/s beside it.
#
# Usage: bench/h2.sh [OUTDIR]          (default bench/runs/<date>-h2)
# Env:   ROUNDS=3 DURATION=5 (seconds) CONNS=64 STREAMS="1 10 100" CAP=50 (percent of CPU 0)
#        CELLS="h2c h2 static" BIN=path/to/twelve (default: build the bench-bin profile,
#        target-cpu=native)
# Needs root (the cgroup CPU cap), h2o, nginx, nghttp2-client (h2load), openssl, python3.
# Every process it starts is stopped by PID on exit.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/h2o-conf.sh"
OUT=${1:-$ROOT/bench/runs/$(date +%F)-h2}
ROUNDS=${ROUNDS:-3}; DURATION=${DURATION:-5}; CONNS=${CONNS:-64}; STREAMS=${STREAMS:-1 10 100}
CAP=${CAP:-50}; CELLS=${CELLS:-h2c h2 static}
# Plain (h2c) and TLS ports of each server.
TW_C=9440; TW_S=9441; HO_C=9450; HO_S=9451; NG_C=9460; NG_S=9461
mkdir -p "$OUT/raw"
if [ -z "${BIN:-}" ]; then
  (cd "$ROOT" && RUSTFLAGS="-C target-cpu=native" cargo build -q --profile bench-bin)
  BIN="${CARGO_TARGET_DIR:-$ROOT/target}/bench-bin/twelve"
fi

DIR=$(mktemp -d /tmp/twelve-h2-bench.XXXXXX)
"$ROOT/bench/tls-pki.sh" "$DIR" > /dev/null
mkdir -p "$DIR/www" "$DIR/nginx" "$DIR/h2o"
head -c 10240 /dev/urandom > "$DIR/www/static.bin"
printf 'Hello, World!' > "$DIR/www/plaintext"

PIDS=()
stop_all() {
  "$ROOT/bench/cpu-quota.sh" off $TW_C $TW_S $HO_C $HO_S $NG_C $NG_S >/dev/null 2>&1 || true
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
  rm -rf "$DIR"
}
trap stop_all EXIT
ulimit -n "$(ulimit -Hn)"

# twelve serve: TLS on one listener, h2c only on the other; its static root serves the file.
taskset -c 0 "$BIN" serve --cpus 0 --workers 1 --root "$DIR/www" \
  --tls-cert "$DIR/chain.pem" --tls-key "$DIR/key.pem" \
  --tls-listen "127.0.0.1:$TW_S" --h2c-listen "127.0.0.1:$TW_C" --listen 127.0.0.1:0 \
  > "$OUT/raw/twelve-serve.log" 2>&1 &
PIDS+=($!)

# h2o: one thread (bench/h2o-conf.sh); the file from file.dir.
write_h2o_conf "$DIR" "$HO_C" "$HO_S" "      /:
        file.dir: $DIR/www"
taskset -c 0 h2o -c "$DIR/h2o/h2o.conf" > "$OUT/raw/h2o.log" 2>&1 &
PIDS+=($!)

# nginx: one worker; http2 on both listeners (the plain one takes prior knowledge only).
cat > "$DIR/nginx/nginx.conf" <<EOF
# root: the worker reads the files of a mktemp directory (mode 700).
user root;
worker_processes 1;
daemon off;
pid $DIR/nginx/nginx.pid;
error_log $DIR/nginx/error.log crit;
worker_rlimit_nofile 20000;
events { worker_connections 16000; use epoll; multi_accept on; }
http {
    access_log off;
    server_tokens off;
    keepalive_requests 1000000000;
    http2_max_concurrent_streams 128;
    client_body_temp_path $DIR/nginx/body;
    proxy_temp_path $DIR/nginx/proxy;
    fastcgi_temp_path $DIR/nginx/fastcgi;
    uwsgi_temp_path $DIR/nginx/uwsgi;
    scgi_temp_path $DIR/nginx/scgi;
    server {
        listen 127.0.0.1:$NG_C http2;
        listen 127.0.0.1:$NG_S ssl http2;
        ssl_certificate $DIR/chain.pem;
        ssl_certificate_key $DIR/key.pem;
        ssl_protocols TLSv1.2 TLSv1.3;
        root $DIR/www;
        location = /plaintext { default_type text/plain; return 200 'Hello, World!'; }
    }
}
EOF
taskset -c 0 nginx -p "$DIR/nginx" -e "$DIR/nginx/error.log" -c "$DIR/nginx/nginx.conf" &
PIDS+=($!)

for p in $TW_C $HO_C $NG_C; do
  for _ in $(seq 50); do
    curl -sf --http2-prior-knowledge "http://127.0.0.1:$p/plaintext" >/dev/null && break
    sleep 0.2
  done
done

{
  echo "# HTTP/2 servers (issue 31)"
  echo
  echo "- date: $(date -u +%FT%TZ)"
  echo "- twelve: $("$BIN" --version | head -1)"
  echo "- commit: $(cd "$ROOT" && git rev-parse --short=12 HEAD)"
  echo "- kernel: $(uname -r)"
  echo "- cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) online"
  echo "- h2o: $(h2o --version | head -1); nginx: $(nginx -v 2>&1); h2load: $(h2load --version | head -1)"
  echo "- servers: one worker each, pinned to CPU 0, capped at $CAP% of it; h2load -t1 on CPU 1"
  echo "- command: \`bench/h2.sh\` (ROUNDS=$ROUNDS DURATION=$DURATION CONNS=$CONNS STREAMS=\"$STREAMS\" CAP=$CAP CELLS=\"$CELLS\")"
} > "$OUT/README.md"

. "$ROOT/bench/ticks.sh"

"$ROOT/bench/cpu-quota.sh" "$CAP" $TW_C $TW_S $HO_C $HO_S $NG_C $NG_S > "$OUT/raw/quota.log"
echo -e "cell\tstreams\tserver\tround\trequests\trps\tserver_cpu_s\treq_per_server_cpu_s" > "$OUT/h2.tsv"
for cell in $CELLS; do
  streams=$STREAMS
  [ "$cell" = static ] && streams=10
  for m in $streams; do
    for r in $(seq "$ROUNDS"); do
      for s in twelve=$TW_C:$TW_S h2o=$HO_C:$HO_S nginx=$NG_C:$NG_S; do
        name=${s%%=*}; ports=${s##*=}; plain=${ports%%:*}; tls=${ports##*:}
        case $cell in
          h2c) url="http://127.0.0.1:$plain/plaintext"; port=$plain ;;
          h2) url="https://127.0.0.1:$tls/plaintext"; port=$tls ;;
          static) url="https://127.0.0.1:$tls/static.bin"; port=$tls ;;
        esac
        raw="$OUT/raw/$cell-m$m-$name-$r.txt"
        read -r -a pids <<< "$(pids_on "$port")"
        t0=$(ticks "${pids[@]}")
        taskset -c 1 h2load -t1 -c"$CONNS" -m"$m" -D"$DURATION" "$url" > "$raw" 2>&1 || true
        t1=$(ticks "${pids[@]}")
        n=$(awk -F'[ ,]+' '/^requests:/{print $8}' "$raw")
        awk -v c="$cell" -v m="$m" -v s="$name" -v r="$r" -v n="${n:-0}" -v d="$DURATION" \
          -v t=$((t1 - t0)) -v hz="$HZ" \
          'BEGIN{cpu=t/hz; printf "%s\t%s\t%s\t%s\t%d\t%.0f\t%.2f\t%.0f\n", c, m, s, r, n, n/d, cpu, (cpu>0?n/cpu:0)}' \
          >> "$OUT/h2.tsv"
      done
    done
  done
done

# Medians per cell and server, and twelve's ratio to each peer.
python3 - "$OUT/h2.tsv" > "$OUT/summary.txt" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
cells = {}
for r in rows:
    cells.setdefault((r["cell"], r["streams"]), {}).setdefault(r["server"], []).append(r)
print("cell\tstreams\tserver\trps\treq_per_server_cpu_s\ttwelve_over_it")
for (cell, m), by in cells.items():
    med = {s: statistics.median(float(x["req_per_server_cpu_s"]) for x in xs) for s, xs in by.items()}
    rps = {s: statistics.median(float(x["rps"]) for x in xs) for s, xs in by.items()}
    for s in by:
        ratio = med["twelve"] / med[s] if med.get(s) else 0
        print(f"{cell}\t{m}\t{s}\t{rps[s]:.0f}\t{med[s]:.0f}\t{ratio:.2f}")
PY
cat "$OUT/summary.txt"

#!/usr/bin/env bash
# bench/tls.sh - issue 16's benchmark: TLS on both sides.
#  1. Server: `twelve serve --tls-cert` against nginx (ssl), each pinned to CPU 0 with one
#     worker and capped at 50% of a core (bench/cpu-quota.sh), wrk (Debian's, which
#     links OpenSSL) on CPU 1; TLS keep-alive json and TLS connection-per-request json;
#     interleaved rounds; requests per server CPU-second, medians.
#  2. Client: twelve bench, h2load and wrk against one uncapped server (nginx, CPU 0), each
#     client on CPU 1; client CPU per request (user + system of the client process), the same
#     two workloads, interleaved rounds, medians.
#
# Usage: bench/tls.sh [OUTDIR]          (default bench/runs/<date>-tls)
# Env:   ROUNDS=5 DURATION=10 (seconds) CONNS=256 CLOSE_CONNS=64
#        CLOSE_N=10000 (h2load's connection-per-request runs are by count)
#        CLIENT_CONNS=64 (keep-alive connections of part 2: CPU per request needs no more, and
#        256 handshakes at once to one nginx worker on a loaded box left wrk with none done)
#        BIN=path/to/twelve (default: build the bench-bin profile, target-cpu=native)
#        PARTS="server client bound" (which parts to run; "bound": the clients against
#        uncapped twelve serve, where the client is the limit)
#        WORKLOADS="json close" (keep-alive json, connection-per-request json)
# Needs root (cgroup CPU cap), wrk, nginx, nghttp2-client (h2load), openssl, python3.
# Every process it starts is stopped by PID on exit.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/bench/runs/$(date +%F)-tls}
ROUNDS=${ROUNDS:-5}; DURATION=${DURATION:-10}; CONNS=${CONNS:-256}; CLOSE_CONNS=${CLOSE_CONNS:-64}
CLOSE_N=${CLOSE_N:-10000}; CLIENT_CONNS=${CLIENT_CONNS:-64}; PARTS=${PARTS:-server client bound}
WORKLOADS=${WORKLOADS:-json close}
TW=8443; NG=8444
mkdir -p "$OUT/raw"
if [ -z "${BIN:-}" ]; then
  (cd "$ROOT" && RUSTFLAGS="-C target-cpu=native" cargo build -q --profile bench-bin)
  BIN="${CARGO_TARGET_DIR:-$ROOT/target}/bench-bin/twelve"
fi

# A CA and an ECDSA P-256 leaf for localhost (the key type most TLS edges serve).
PKI=$(mktemp -d /tmp/twelve-tls-bench.XXXXXX)
"$ROOT/bench/tls-pki.sh" "$PKI"

PIDS=()
stop_all() {
  "$ROOT/bench/cpu-quota.sh" off "$TW" "$NG" >/dev/null 2>&1 || true
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
  rm -rf "$PKI"
}
trap stop_all EXIT

ulimit -n "$(ulimit -Hn)"
taskset -c 0 "$BIN" serve --listen "127.0.0.1:$TW" --cpus 0 \
  --tls-cert "$PKI/chain.pem" --tls-key "$PKI/key.pem" > "$OUT/raw/twelve-serve.log" 2>&1 &
PIDS+=($!)
sed -e "s|@DIR@|$PKI|g" -e "s|@CERT@|$PKI/chain.pem|" -e "s|@KEY@|$PKI/key.pem|" \
  -e "s|@PORT@|$NG|" "$ROOT/bench/nginx-tls.conf" > "$PKI/nginx.conf"
taskset -c 0 nginx -p "$PKI" -e "$PKI/error.log" -c "$PKI/nginx.conf" &
PIDS+=($!)
for p in $TW $NG; do
  for _ in $(seq 50); do curl -sfk "https://127.0.0.1:$p/json" >/dev/null && break; sleep 0.2; done
done

{
  echo "# TLS benchmark (issue 16)"
  echo
  echo "- date: $(date -u +%FT%TZ)"
  echo "- twelve: $("$BIN" --version | head -1)"
  echo "- commit: $(cd "$ROOT" && git rev-parse --short=12 HEAD)"
  echo "- kernel: $(uname -r)"
  echo "- cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) online"
  echo "- nginx: $(nginx -V 2>&1 | head -1), $(nginx -V 2>&1 | grep -m1 'OpenSSL')"
  echo "- wrk: $(wrk -v 2>&1 | head -1); h2load: $(h2load --version | head -1)"
  echo "- certificate: ECDSA P-256 leaf + CA chain; TLS 1.3 negotiated by every client here"
  echo "- command: \`bench/tls.sh\` (ROUNDS=$ROUNDS DURATION=$DURATION CONNS=$CONNS CLOSE_CONNS=$CLOSE_CONNS CLOSE_N=$CLOSE_N CLIENT_CONNS=$CLIENT_CONNS PARTS=\"$PARTS\" WORKLOADS=\"$WORKLOADS\")"
  echo "- twelve bench runs on its default engine (--io auto: io_uring here); twelve-epoll is the same"
  echo "  client with --io epoll; twelve-full resumes no session (--no-tls-resume); twelve-noverify"
  echo "  verifies no certificate chain (--insecure) and, per request, resumes no session either:"
  echo "  what wrk and h2load do; twelve-read books each response when it was read (--rx-time"
  echo "  read), so it naps as briefly as before the kernel's receive stamps"
} > "$OUT/README.md"

. "$ROOT/bench/ticks.sh"

# Runs a command on CPU 1; prints "<user+sys seconds of it and its children>" and saves its
# stdout to $1.
timed() {
  local out=$1; shift
  python3 -c 'import os,sys,subprocess
r=subprocess.run(sys.argv[2:],stdout=open(sys.argv[1],"w"),stderr=subprocess.STDOUT)
u=os.times(); print(f"{u.children_user+u.children_system:.3f}")' "$out" taskset -c 1 "$@"
}
# Requests a client completed, from its saved output.
requests_in() {
  case $1 in
    wrk)      awk '/requests in/{print $1}' "$2" ;;
    h2load)   awk -F'[ ,]+' '/^requests:/{print $8}' "$2" ;;
    # The report is the JSON among twelve bench's progress lines and warnings (stderr, merged by `timed`).
    twelve*) python3 -c 'import json,sys; t=open(sys.argv[1]).read(); print(json.JSONDecoder().raw_decode(t, t.index("{"))[0]["requests"])' "$2" ;;
  esac
}
client_cmd() { # name workload port [conns] -> the command line, in CMD
  local url="https://localhost:$3/json" c=${4:-$CONNS}
  if [ "$2" = close ]; then c=$CLOSE_CONNS; fi
  case $1 in
    wrk) CMD=(wrk -t1 -c"$c" -d"${DURATION}s") ;;
    # h2load's timed mode (-D) does not reopen closed connections: connection-per-request
    # runs it by count instead, CLOSE_N requests.
    h2load) if [ "$2" = close ]; then CMD=(h2load --h1 -t1 -c"$c" -n"$CLOSE_N")
            else CMD=(h2load --h1 -t1 -c"$c" -D"$DURATION"); fi ;;
    twelve*) CMD=("$BIN" bench -t1 -c"$c" -d"${DURATION}s" --warmup 0 --cpus 1 --json)
      # twelve-noverify does what wrk and h2load do: no chain verification (the handshake's
      # own signature is still checked).
      if [ "$1" = twelve-noverify ]; then CMD+=(--insecure); else CMD+=(--cacert "$PKI/ca.pem"); fi
      if [ "$1" = twelve-full ] || [ "$1" = twelve-noverify ] && [ "$2" = close ]; then
        CMD+=(--no-tls-resume)
      fi
      if [ "$1" = twelve-epoll ]; then CMD+=(--io epoll); fi
      if [ "$1" = twelve-read ]; then CMD+=(--rx-time read); fi ;;
  esac
  if [ "$2" = close ]; then
    case $1 in
      twelve*) CMD+=(--close) ;;
      *) CMD+=(-H 'Connection: close') ;;
    esac
  fi
  CMD+=("$url")
}

# 1. Servers, capped: wrk on CPU 1.
echo -e "workload\tserver\tround\trequests\trps\tserver_cpu_s\treq_per_server_cpu_s" > "$OUT/server.tsv"
[[ " $PARTS " == *" server "* ]] && "$ROOT/bench/cpu-quota.sh" 50 "$TW" "$NG" > "$OUT/raw/quota.log"
[[ " $PARTS " == *" server "* ]] && for w in json close; do
  for r in $(seq "$ROUNDS"); do
    for s in twelve=$TW nginx=$NG; do
      name=${s%%=*}; port=${s##*=}; raw="$OUT/raw/server-$w-$name-$r.txt"
      read -r -a pids <<< "$(pids_on "$port")"
      t0=$(ticks "${pids[@]}")
      client_cmd wrk "$w" "$port"
      timed "$raw" "${CMD[@]}" > /dev/null
      t1=$(ticks "${pids[@]}")
      n=$(requests_in wrk "$raw")
      awk -v w="$w" -v s="$name" -v r="$r" -v n="$n" -v d="$DURATION" -v t=$((t1 - t0)) -v hz="$HZ" \
        'BEGIN{c=t/hz; printf "%s\t%s\t%s\t%d\t%.0f\t%.2f\t%.0f\n", w, s, r, n, n/d, c, (c>0?n/c:0)}' \
        >> "$OUT/server.tsv"
    done
  done
done
"$ROOT/bench/cpu-quota.sh" off "$TW" "$NG" >> "$OUT/raw/quota.log" 2>/dev/null || true

# 2. Clients, each on CPU 1, against one uncapped server on CPU 0: nginx (part "client": nginx
# is the limit, so the clients mostly wait), then twelve serve (part "bound": the faster
# server, so the client is the limit, as bench/clients.sh measures plain HTTP). The server
# needs most of CPU 0 for connection-per-request.
clients_against() { # PORT TSV
  echo -e "workload\tclient\tround\trequests\tclient_cpu_s\tclient_cpu_us_per_req" > "$2"
  for w in $WORKLOADS; do
    for r in $(seq "$ROUNDS"); do
      clients=(twelve twelve-epoll twelve-noverify h2load wrk)
      # Connection per request: twelve also without resumption, a full handshake each time.
      if [ "$w" = close ]; then clients+=(twelve-full); fi
      clients+=(twelve-read)
      for c in "${clients[@]}"; do
        raw="$OUT/raw/$(basename "$2" .tsv)-$w-$c-$r.txt"
        client_cmd "$c" "$w" "$1" "$CLIENT_CONNS"
        cpu=$(timed "$raw" "${CMD[@]}")
        n=$(requests_in "$c" "$raw")
        awk -v w="$w" -v c="$c" -v r="$r" -v n="$n" -v cpu="$cpu" \
          'BEGIN{printf "%s\t%s\t%s\t%d\t%.3f\t%.2f\n", w, c, r, n, cpu, (n>0?cpu*1e6/n:0)}' \
          >> "$2"
      done
    done
  done
}
if [[ " $PARTS " == *" client "* ]]; then clients_against "$NG" "$OUT/client.tsv"; fi
if [[ " $PARTS " == *" bound "* ]]; then clients_against "$TW" "$OUT/client-bound.tsv"; fi

python3 - "$OUT" <<'PY' > "$OUT/summary.md"
import csv, sys, statistics as st, os
out = sys.argv[1]
def rows(n): return list(csv.DictReader(open(os.path.join(out, n)), delimiter='\t'))
def med(rs, k): return st.median(float(r[k]) for r in rs)
srv = rows("server.tsv")
if srv:
    print("## Servers, capped at 50% of CPU 0, wrk on CPU 1 (medians)\n")
    print("| workload | server | req/s | req per server CPU-s | twelve / nginx |\n|---|---|---|---|---|")
for w in ("json", "close") if srv else ():
    by = {s: [r for r in srv if r["workload"] == w and r["server"] == s] for s in ("twelve", "nginx")}
    eff = {s: med(rs, "req_per_server_cpu_s") for s, rs in by.items()}
    for s, rs in by.items():
        ratio = f"{eff['twelve'] / eff['nginx']:.2f}" if s == "twelve" else ""
        print(f"| {w} | {s} | {med(rs, 'rps'):.0f} | {eff[s]:.0f} | {ratio} |")
def clients(tsv, title):
    if not os.path.exists(os.path.join(out, tsv)):
        return
    print(f"\n## {title}\n")
    print("| workload | client | requests | CPU µs per request | twelve / this | twelve-noverify / this |\n|---|---|---|---|---|---|")
    cl = rows(tsv)
    for w in ("json", "close"):
        names = ("twelve", "twelve-epoll", "twelve-full", "twelve-noverify", "twelve-read", "h2load", "wrk")
        by = {c: [r for r in cl if r["workload"] == w and r["client"] == c] for c in names}
        by = {c: rs for c, rs in by.items() if rs}
        if "twelve" not in by:
            continue
        tw = med(by["twelve"], "client_cpu_us_per_req")
        nv = med(by["twelve-noverify"], "client_cpu_us_per_req") if "twelve-noverify" in by else None
        for c, rs in by.items():
            us = med(rs, "client_cpu_us_per_req")
            peer = not c.startswith("twelve") or c == "twelve-read"
            ratio = f"{tw / us:.2f}" if peer else ""
            ratio_nv = f"{nv / us:.2f}" if peer and nv else ""
            print(f"| {w} | {c} | {med(rs, 'requests'):.0f} | {us:.2f} | {ratio} | {ratio_nv} |")
clients("client.tsv", "Clients against uncapped nginx (nginx the limit), each on CPU 1 (medians)")
clients("client-bound.tsv", "Clients against uncapped twelve serve (the client the limit), each on CPU 1 (medians)")
PY
cat "$OUT/summary.md"

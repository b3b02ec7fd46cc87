#!/usr/bin/env bash
# bench/h2-client.sh - issue 32's benchmark: `twelve bench --h2c/--h2` against h2load as HTTP/2
# clients, in interleaved rounds (h2load, twelve, h2load, ...), client pinned to CPU 1, servers
# to CPU 0 with one worker: `twelve serve` and h2o uncapped (the client is the limit: client
# CPU per request), then h2o capped at CAP% of CPU 0 (the server is the limit: req/s). Cells:
# h2c (prior knowledge) and h2 (TLS, ALPN), `-c CONNS` with `-m`/`--streams` 1, 10 and 100, on
# /plaintext (HttpArena's baseline-h2 and baseline-h2c shape). Client CPU is user + system of
# the whole client process from bash `time`; each client is warmed up by a separate run first.
#
# Usage: bench/h2-client.sh [OUTDIR]       (default bench/runs/<date>-h2-client)
# Env:   ROUNDS=3 DURATION=4 WARMUP=1 (seconds) CONNS=64 STREAMS="1 10 100" CAP=50
#        MODES="uncapped capped" BIN=path/to/twelve (default: build the bench-bin profile)
#        CLIENTS="h2load twelve" (twelve_nonap: twelve bench --coalesce off, which never naps)
# Needs root (the cgroup CPU cap), h2o, nghttp2-client (h2load), openssl, python3.
# Every process it starts is stopped by PID on exit.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/h2o-conf.sh"
OUT=${1:-$ROOT/bench/runs/$(date +%F)-h2-client}
ROUNDS=${ROUNDS:-3}; DURATION=${DURATION:-4}; WARMUP=${WARMUP:-1}; CONNS=${CONNS:-64}
STREAMS=${STREAMS:-1 10 100}; CAP=${CAP:-50}; MODES=${MODES:-uncapped capped}
CLIENTS=${CLIENTS:-h2load twelve}
# Plain (h2c) and TLS ports of each server.
TW_C=9540; TW_S=9541; HO_C=9550; HO_S=9551
mkdir -p "$OUT/raw"
# A cgroup of this run's own for the cap (see bench/cpu-quota.sh).
export QUOTA_CGROUP=h2client-$$
if [ -z "${BIN:-}" ]; then
  (cd "$ROOT" && RUSTFLAGS="-C target-cpu=native" cargo build -q --profile bench-bin)
  BIN="${CARGO_TARGET_DIR:-$ROOT/target}/bench-bin/twelve"
fi

DIR=$(mktemp -d /tmp/twelve-h2-client.XXXXXX)
"$ROOT/bench/tls-pki.sh" "$DIR" > /dev/null
mkdir -p "$DIR/h2o"

PIDS=()
stop_all() {
  "$ROOT/bench/cpu-quota.sh" off $HO_C $HO_S >/dev/null 2>&1 || true
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
  rm -rf "$DIR"
}
trap stop_all EXIT
ulimit -n "$(ulimit -Hn)"

taskset -c 0 "$BIN" serve --cpus 0 --workers 1 \
  --tls-cert "$DIR/chain.pem" --tls-key "$DIR/key.pem" \
  --tls-listen "127.0.0.1:$TW_S" --h2c-listen "127.0.0.1:$TW_C" --listen 127.0.0.1:0 \
  > "$OUT/raw/twelve-serve.log" 2>&1 &
PIDS+=($!)

# h2o: one thread (bench/h2o-conf.sh).
write_h2o_conf "$DIR" "$HO_C" "$HO_S"
taskset -c 0 h2o -c "$DIR/h2o/h2o.conf" > "$OUT/raw/h2o.log" 2>&1 &
PIDS+=($!)

for p in $TW_C $HO_C; do
  for _ in $(seq 50); do
    curl -sf --http2-prior-knowledge "http://127.0.0.1:$p/plaintext" >/dev/null && break
    sleep 0.2
  done
done

{
  echo "# twelve bench --h2/--h2c against h2load (issue 32)"
  echo
  echo "- date: $(date -u +%FT%TZ)"
  echo "- twelve: $("$BIN" --version | head -1)"
  echo "- commit: $(cd "$ROOT" && git rev-parse --short=12 HEAD)"
  echo "- kernel: $(uname -r)"
  echo "- cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) online"
  echo "- h2o: $(h2o --version | head -1); h2load: $(h2load --version | head -1)"
  echo "- servers: one worker each, pinned to CPU 0; capped mode: h2o at $CAP% of CPU 0"
  echo "- clients: -t1 on CPU 1, -c$CONNS, ${DURATION}s measured after a separate ${WARMUP}s warm-up run"
  echo "- command: \`bench/h2-client.sh\` (ROUNDS=$ROUNDS DURATION=$DURATION CONNS=$CONNS STREAMS=\"$STREAMS\" CAP=$CAP MODES=\"$MODES\" CLIENTS=\"$CLIENTS\")"
} > "$OUT/README.md"

# Each prints "requests"; bash `time` (in the caller) gives the client's user and system CPU.
run_h2load() { # URL STREAMS FILE
  taskset -c 1 h2load -t1 -c"$CONNS" -m"$2" -D"$WARMUP" "$1" > /dev/null 2>&1 || true
  TIMEFORMAT='%U %S %R'
  { time taskset -c 1 h2load -t1 -c"$CONNS" -m"$2" -D"$DURATION" "$1" > "$3" 2>&1 || true; } 2> "$3.time"
  awk -F'[ ,]+' '/^requests:/{print $8}' "$3"
}
run_twelve_nonap() { EXTRA="--coalesce off" run_twelve "$@"; }
run_twelve() { # URL STREAMS FILE
  local proto="--h2c ${EXTRA:-}"
  case $1 in https://*) proto="--h2 --cacert $DIR/ca.pem ${EXTRA:-}" ;; esac
  # shellcheck disable=SC2086
  timeout 60 "$BIN" bench $proto --streams "$2" --cpus 1 -t1 -c"$CONNS" -d"${WARMUP}s" \
    --warmup 0 "$1" > /dev/null 2>&1 || true
  TIMEFORMAT='%U %S %R'
  # shellcheck disable=SC2086
  { time timeout 60 "$BIN" bench $proto --streams "$2" --cpus 1 -t1 -c"$CONNS" \
    -d"${DURATION}s" --warmup 0 --timeout 5s "$1" --json > "$3" 2> "$3.err" || true; } 2> "$3.time"
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["requests"])' "$3" 2>/dev/null || echo 0
}

TSV="$OUT/runs.tsv"
echo -e "mode\tproto\tstreams\tserver\tclient\tround\trequests\trps\tuser_s\tsys_s\tcpu_us_per_req" > "$TSV"
for mode in $MODES; do
  servers="twelve=$TW_C:$TW_S h2o=$HO_C:$HO_S"
  if [ "$mode" = capped ]; then
    servers="h2o=$HO_C:$HO_S"
    "$ROOT/bench/cpu-quota.sh" "$CAP" $HO_C $HO_S > "$OUT/raw/quota.log"
  fi
  for proto in h2c h2; do
    for m in $STREAMS; do
      for s in $servers; do
        name=${s%%=*}; ports=${s##*=}
        if [ "$proto" = h2c ]; then url="http://127.0.0.1:${ports%%:*}/plaintext"
        else url="https://127.0.0.1:${ports##*:}/plaintext"; fi
        for ((r = 1; r <= ROUNDS; r++)); do
          for client in $CLIENTS; do
            f="$OUT/raw/$mode-$proto-m$m-$name-$client-$r.out"
            n=$(run_$client "$url" "$m" "$f")
            read -r u sy _ < "$f.time"
            awk -v a="$mode" -v p="$proto" -v m="$m" -v s="$name" -v c="$client" -v r="$r" \
              -v n="${n:-0}" -v d="$DURATION" -v u="$u" -v sy="$sy" \
              'BEGIN{printf "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%.0f\t%s\t%s\t%.3f\n", a, p, m, s, c, r, n, n/d, u, sy, (n>0?1e6*(u+sy)/n:0)}' \
              >> "$TSV"
          done
        done
      done
    done
  done
  if [ "$mode" = capped ]; then "$ROOT/bench/cpu-quota.sh" off $HO_C $HO_S >> "$OUT/raw/quota.log"; fi
done

# Medians per cell, and twelve's ratio to h2load (CPU per request uncapped, req/s capped).
python3 - "$TSV" > "$OUT/summary.txt" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
cells = {}
for r in rows:
    key = (r["mode"], r["proto"], r["streams"], r["server"])
    cells.setdefault(key, {}).setdefault(r["client"], []).append(r)
print("mode\tproto\tstreams\tserver\tclient\th2load_cpu_us\tclient_cpu_us\tcpu_ratio\th2load_rps\tclient_rps\trps_ratio")
for (mode, proto, m, srv), by in cells.items():
    med = lambda c, k: statistics.median(float(x[k]) for x in by.get(c, [])) if by.get(c) else 0
    hc, hr = med("h2load", "cpu_us_per_req"), med("h2load", "rps")
    for c in sorted(k for k in by if k != "h2load"):
        tc, tr = med(c, "cpu_us_per_req"), med(c, "rps")
        print(f"{mode}\t{proto}\t{m}\t{srv}\t{c}\t{hc:.3f}\t{tc:.3f}\t{tc/hc if hc else 0:.3f}\t{hr:.0f}\t{tr:.0f}\t{tr/hr if hr else 0:.3f}")
PY
cat "$OUT/summary.txt"

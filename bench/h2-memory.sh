#!/usr/bin/env bash
# bench/h2-memory.sh - issue 32's memory target: the client's resident memory per HTTP/2
# connection, `twelve bench --h2c` against h2load, into the same server (`twelve serve`, one
# worker, CPU 0, h2c), clients on CPU 1 with one thread. Each client runs at -c LOW and -c HIGH
# (same -m/--streams, same duration); its peak RSS (GNU time's %M) at each, and the growth per
# connection (RSS_HIGH - RSS_LOW) / (HIGH - LOW), the median over ROUNDS, interleaved (h2load,
# twelve, h2load, ...). A client that did not open every connection is flagged.
#
# Usage: bench/h2-memory.sh [OUTDIR]       (default bench/runs/<date>-h2-memory)
# Env:   ROUNDS=3 DURATION=3 (seconds) LOW=10 HIGH=1000 STREAMS="1 100" PORT=9560
#        BIN=path/to/twelve (default: build the bench-bin profile)
# Writes OUTDIR/README.md, runs.tsv (one row per run) and summary.txt (the medians and ratio).
# Needs h2load (nghttp2-client), GNU time, python3. Every process it starts is stopped by PID.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/bench/runs/$(date +%F)-h2-memory}
ROUNDS=${ROUNDS:-3}; DURATION=${DURATION:-3}; LOW=${LOW:-10}; HIGH=${HIGH:-1000}
STREAMS=${STREAMS:-1 100}; PORT=${PORT:-9560}
mkdir -p "$OUT/raw"
if [ -z "${BIN:-}" ]; then
  (cd "$ROOT" && RUSTFLAGS="-C target-cpu=native" cargo build -q --profile bench-bin --bin twelve)
  BIN="${CARGO_TARGET_DIR:-$ROOT/target}/bench-bin/twelve"
fi
PIDS=()
stop_all() {
  local p
  for p in ${PIDS[@]+"${PIDS[@]}"}; do kill "$p" 2>/dev/null || true; done
  for p in ${PIDS[@]+"${PIDS[@]}"}; do wait "$p" 2>/dev/null || true; done
}
trap stop_all EXIT
ulimit -n "$(ulimit -Hn)"

taskset -c 0 "$BIN" serve --cpus 0 --workers 1 --listen 127.0.0.1:0 \
  --h2c-listen "127.0.0.1:$PORT" > "$OUT/raw/twelve-serve.log" 2>&1 &
PIDS+=($!)
URL=http://127.0.0.1:$PORT/plaintext
for _ in $(seq 50); do
  curl -sf --http2-prior-knowledge "$URL" > /dev/null && break
  sleep 0.2
done

{
  echo "# Client memory per HTTP/2 connection: twelve bench --h2c against h2load (issue 32)"
  echo
  echo "- date: $(date -u +%FT%TZ)"
  echo "- twelve: $("$BIN" --version | head -1)"
  echo "- commit: $(cd "$ROOT" && git rev-parse --short=12 HEAD)"
  echo "- kernel: $(uname -r); h2load: $(h2load --version | head -1)"
  echo "- server: twelve serve, one worker on CPU 0, h2c; clients -t1 on CPU 1, ${DURATION}s each"
  echo "- command: \`bench/h2-memory.sh\` (ROUNDS=$ROUNDS DURATION=$DURATION LOW=$LOW HIGH=$HIGH STREAMS=\"$STREAMS\")"
} > "$OUT/README.md"

# Each prints "peak_kib connections_open".
run_h2load() { # CONNS STREAMS FILE
  /usr/bin/time -f %M -o "$3.rss" taskset -c 1 h2load -t1 -c"$1" -m"$2" -D"$DURATION" "$URL" \
    > "$3" 2>&1 || true
  # h2load's "clients" line does not say how many connected; its errors do.
  local failed
  failed=$(awk '/^requests:/{print $10}' "$3")
  echo "$(cat "$3.rss") $1 ${failed:-?}"
}
run_twelve() { # CONNS STREAMS FILE
  /usr/bin/time -f %M -o "$3.rss" taskset -c 1 "$BIN" bench --h2c --streams "$2" --cpus 1 -t1 \
    -c"$1" -d"${DURATION}s" --warmup 0 --timeout 5s --json "$URL" > "$3" 2> "$3.err" || true
  local open
  open=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["connections"]["peak_open"])' "$3" 2>/dev/null || echo 0)
  echo "$(cat "$3.rss") $open -"
}

TSV=$OUT/runs.tsv
echo -e "streams\tround\tclient\tconns\tpeak_kib\topen\tfailed" > "$TSV"
for m in $STREAMS; do
  for ((r = 1; r <= ROUNDS; r++)); do
    for client in h2load twelve; do
      for c in $LOW $HIGH; do
        read -r kib open failed < <(run_$client "$c" "$m" "$OUT/raw/m$m-$client-c$c-$r.out")
        echo -e "$m\t$r\t$client\t$c\t$kib\t$open\t$failed" >> "$TSV"
      done
    done
  done
done

python3 - "$TSV" "$LOW" "$HIGH" > "$OUT/summary.txt" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
low, high = int(sys.argv[2]), int(sys.argv[3])
by = {}
for r in rows:
    by.setdefault((r["streams"], r["round"], r["client"]), {})[int(r["conns"])] = r
print("streams\tclient\tpeak_kib_low\tpeak_kib_high\tbytes_per_conn\tratio_to_h2load")
for m in sorted({r["streams"] for r in rows}, key=int):
    per = {}
    for c in ("h2load", "twelve"):
        growth, lows, highs = [], [], []
        for (mm, _, cc), d in by.items():
            if mm == m and cc == c and low in d and high in d:
                a, b = int(d[low]["peak_kib"]), int(d[high]["peak_kib"])
                lows.append(a); highs.append(b)
                growth.append((b - a) * 1024 / (high - low))
        per[c] = (statistics.median(lows), statistics.median(highs), statistics.median(growth))
    for c, (a, b, g) in per.items():
        print(f"{m}\t{c}\t{a:.0f}\t{b:.0f}\t{g:.0f}\t{g / per['h2load'][2]:.3f}")
PY
cat "$OUT/summary.txt"

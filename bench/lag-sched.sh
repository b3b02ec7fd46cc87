#!/usr/bin/env bash
# bench/lag-sched.sh - how much of the open model's schedule lag is the machine's other tasks:
# twelve serve on CPU 0 and twelve bench's open model (-t 1 -c 64 -R RATE) on CPU 1, run in
# turn under the normal policy (other) and under SCHED_FIFO priority 1 (fifo: no task of the
# normal policy, such as a kernel thread or the host's agent, can take either CPU from them
# while they run), rounds interleaved, each pair in the opposite order to the last. Per run:
# the lag's p50 (latency.queue_wait), p99 and max (self_check), p99.9, and the client's CPU
# per request. RT throttling (sched_rt_runtime_us, 95% of each second) bounds a FIFO task that
# would spin; neither does here.
#
# Usage: ROUNDS=4 DURATION=4 RATES="10000 40000" [BIN=path/to/twelve] bench/lag-sched.sh [OUT_DIR]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-4}; DURATION=${DURATION:-4}; RATES=${RATES:-10000 40000}; PORT=${PORT:-8312}
OUT=${1:-$ROOT/bench/runs/$(date -u +%F)-lag-sched}
BIN=${BIN:-$ROOT/target/bench-bin/twelve}
[ -x "$BIN" ] || (cd "$ROOT" && RUSTFLAGS="-C target-cpu=native" cargo build -q --profile bench-bin -p twelve --bin twelve)
if ss -Hltn "sport = :$PORT" | grep -q .; then
  echo "bench/lag-sched.sh: port $PORT is in use: set PORT to a free one" >&2; exit 2
fi
mkdir -p "$OUT/raw"
echo -e "round\tsched\trate\tlag_p50_us\tlag_p99_us\tlag_p999_us\tlag_max_us\tclient_cpu_ns_per_req" > "$OUT/runs.tsv"
one() { # sched round
  local run=()
  [ "$1" = fifo ] && run=(chrt -f 1)
  "${run[@]}" taskset -c 0 "$BIN" serve --listen "127.0.0.1:$PORT" --cpus 0 > "$OUT/raw/serve-$1-$2.log" 2>&1 &
  local srv=$!
  for _ in $(seq 100); do ss -Hltn "sport = :$PORT" | grep -q . && break; sleep 0.05; done
  for rate in $RATES; do
    local f="$OUT/raw/$1-$rate-$2.json"
    "${run[@]}" taskset -c 1 "$BIN" bench "http://127.0.0.1:$PORT/json" -t 1 -c 64 -R "$rate" \
      -d "${DURATION}s" --warmup 1s --json > "$f" 2> "$f.err" || true
    python3 - "$f" "$2" "$1" "$rate" >> "$OUT/runs.tsv" <<'PY'
import json, sys
f, rnd, sched, rate = sys.argv[1:]
try:
    j = json.load(open(f))
    s, q = j["self_check"], j["latency"]["queue_wait"]
    cells = [q["p50_us"], s["p99_schedule_lag_us"], q["p999_us"], s["max_schedule_lag_us"], round(j["client"]["cpu_ns_per_request"])]
except (OSError, ValueError, KeyError, TypeError):
    cells = ["-"] * 5
print("\t".join(map(str, [rnd, sched, rate] + cells)))
PY
  done
  kill "$srv"; wait "$srv" 2>/dev/null || true
}
for ((r = 1; r <= ROUNDS; r++)); do
  if ((r % 2)); then order="other fifo"; else order="fifo other"; fi
  for s in $order; do one "$s" "$r"; done
done
python3 - "$OUT/runs.tsv" > "$OUT/summary.md" <<'PY'
import csv, statistics, sys
rows = [r for r in csv.DictReader(open(sys.argv[1]), delimiter="\t") if r["lag_p99_us"] != "-"]
print("| rate | policy | lag p50 µs | lag p99 µs per round | median p99 | lag p99.9 µs (median) | lag max µs (median) | client ns CPU/req (median) |")
print("|---|---|---|---|---|---|---|---|")
for rate in sorted({r["rate"] for r in rows}, key=int):
    for sched in ("other", "fifo"):
        rs = [r for r in rows if r["rate"] == rate and r["sched"] == sched]
        if not rs:
            continue
        med = lambda k: statistics.median(float(r[k]) for r in rs)
        print(f"| {rate} | {sched} | {med('lag_p50_us'):.1f} | {', '.join(r['lag_p99_us'] for r in rs)} | {med('lag_p99_us'):.1f} | "
              f"{med('lag_p999_us'):.1f} | {med('lag_max_us'):.1f} | {med('client_cpu_ns_per_req'):.0f} |")
PY
cat "$OUT/summary.md"

#!/usr/bin/env bash
# bench/shards.sh - does a run split into shards measure what one process measures? Against
# one `twelve serve` (one worker, CPU 0), the same open-model run is made by one `twelve bench`
# process and by 2 and 4 shard processes (`--shard I/N`, started together through the
# barrier, merged by `twelve merge`), all on CPU 1, interleaved (1 2 4, then 2 4 1, then
# 4 1 2, ...). Each run is counted (-n), so there is no warm-up and the server's own request
# counter (/metrics) must equal the requests the shards report, exactly. The runs are recorded
# side by side: requests, what the server served, req/s, corrected and uncorrected latency,
# and whether the merge judged the union valid; medians over rounds per shard count.
#
# Usage: bench/shards.sh [OUTDIR]          (default bench/runs/<date>-shards)
# Env:   ROUNDS=3  RATE=20000  REQUESTS=200000  CONNS=64  SHARDS="1 2 4"  PORT=8097  BPORT=8098
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/bench/runs/$(date +%F)-shards}
ROUNDS=${ROUNDS:-3}; RATE=${RATE:-20000}; REQUESTS=${REQUESTS:-200000}; CONNS=${CONNS:-64}
SHARDS=${SHARDS:-1 2 4}; PORT=${PORT:-8097}; BPORT=${BPORT:-8098}
mkdir -p "$OUT/raw"

# The benchmark build: fat LTO, one codegen unit, panic=abort, tuned for this CPU.
(cd "$ROOT" && RUSTFLAGS="-C target-cpu=native" cargo build -q --profile bench-bin)
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/bench-bin/twelve

SRV_PID=
stop_server() {
  if [ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; then wait "$SRV_PID" 2>/dev/null || true; fi
  SRV_PID=
}
trap stop_server EXIT
ulimit -n "$(ulimit -Hn)"
taskset -c 0 "$BIN" serve --listen "127.0.0.1:$PORT" --cpus 0 > "$OUT/raw/twelve-serve.log" 2>&1 &
SRV_PID=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PORT/json" >/dev/null && break; sleep 0.2; done
URL="http://127.0.0.1:$PORT/json"

served() {
  curl -sf --max-time 2 "http://127.0.0.1:$PORT/metrics" |
    awk '/^twelve_requests_total/ {s += $2} END {print s + 0}'
}

# One run with N processes; its merged (or single) report in $OUT/raw/r<round>-n<N>.json.
run() {
  local round=$1 n=$2 base="$OUT/raw/r$1-n$2" i pids=() before after
  # --cpus 1: a worker pins itself, which would override taskset's mask (it defaults to CPU 0).
  local common=(-R "$RATE" -n "$REQUESTS" -c "$CONNS" -t 1 --cpus 1 --timeout 5s --json)
  before=$(served)
  if [ "$n" = 1 ]; then
    timeout 120 taskset -c 1 "$BIN" bench "${common[@]}" --timeseries "$base.ndjson" "$URL" \
      > "$base.json" 2> "$base.err"
  else
    for ((i = 0; i < n; i++)); do
      timeout 120 taskset -c 1 "$BIN" bench --shard "$i/$n" --barrier "127.0.0.1:$BPORT" \
        "${common[@]}" --timeseries "$base-s$i.ndjson" "$URL" > "$base-s$i.json" 2> "$base-s$i.err" &
      pids+=($!)
    done
    for i in "${pids[@]}"; do wait "$i"; done
    # Exit 1 only says invalid or an SLO failed; the verdict is in the JSON.
    "$BIN" merge "$base"-s*.json "$base"-s*.ndjson --json --timeseries "$base.ndjson" \
      > "$base.json" 2> "$base.err" || true
  fi
  after=$(served)
  # One /metrics request is counted between the two readings.
  echo "$((after - before - 1))" > "$base.served"
}

for ((r = 1; r <= ROUNDS; r++)); do
  order=($SHARDS)
  k=$(( (r - 1) % ${#order[@]} ))
  order=("${order[@]:k}" "${order[@]:0:k}")
  for n in "${order[@]}"; do
    echo "round $r: $n process(es)" >&2
    run "$r" "$n"
  done
done

TSV="$OUT/runs.tsv"
python3 - "$OUT" "$ROUNDS" "$SHARDS" > "$TSV" <<'PY'
import json, sys
out, rounds, shards = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
print("round\tprocesses\trequests\tserved\trps\tp50_us\tp90_us\tp99_us\tp999_us\tmax_us\tu_p99_us\tvalid\tstart_spread_ms")
for r in range(1, rounds + 1):
    for n in shards:
        base = f"{out}/raw/r{r}-n{n}"
        d = json.load(open(base + ".json"))
        c, u = d["latency"]["corrected"], d["latency"]["uncorrected"]
        # A single process is not judged (twelve merge judges shards): "-" for it.
        m = d.get("merge") or {"valid": "-", "start_spread_s": 0.0}
        served = open(base + ".served").read().strip()
        print("\t".join(str(x) for x in [r, n, d["requests"], served, round(d["rps"], 1),
              c["p50_us"], c["p90_us"], c["p99_us"], c["p999_us"], c["max_us"], u["p99_us"],
              m["valid"], round(m["start_spread_s"] * 1e3, 2)]))
PY

{
  echo "# One process against 2 and 4 merged shards, same open-model run"
  echo
  echo "- date: $(date -u +%FT%TZ); twelve: $("$BIN" --version)"
  echo "- kernel: $(uname -r); cpu: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
  echo "- server: twelve serve, one worker on CPU 0; clients: every process -t1 on CPU 1"
  echo "- each run: -R $RATE -n $REQUESTS -c $CONNS (split across the shards), counted, no warm-up;"
  echo "  shards started through the barrier on 127.0.0.1:$BPORT and merged by twelve merge"
  echo "- command: \`ROUNDS=$ROUNDS RATE=$RATE REQUESTS=$REQUESTS CONNS=$CONNS SHARDS=\"$SHARDS\" bench/shards.sh\`"
  echo "- every client process shares CPU 1 with the others: tail latency grows with their number"
  echo
  python3 - "$TSV" "$SHARDS" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
print("Medians over rounds (corrected latency unless marked u):")
print()
print("| processes | requests | served (server's count) | counts equal in every round | req/s | p50 µs | p90 µs | p99 µs | p99.9 µs | max µs | u p99 µs | valid | start spread ms |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for n in sys.argv[2].split():
    rs = [r for r in rows if r["processes"] == n]
    med = lambda k: statistics.median(float(r[k]) for r in rs)
    equal = all(r["requests"] == r["served"] for r in rs)
    valid = sum(r["valid"] == "True" for r in rs)
    valid = "-" if all(r["valid"] == "-" for r in rs) else f"{valid}/{len(rs)}"
    print(f"| {n} | {med('requests'):.0f} | {med('served'):.0f} | {'yes' if equal else 'NO'} | "
          f"{med('rps'):,.0f} | {med('p50_us'):.1f} | {med('p90_us'):.1f} | {med('p99_us'):.1f} | "
          f"{med('p999_us'):.1f} | {med('max_us'):.1f} | {med('u_p99_us'):.1f} | "
          f"{valid} | {med('start_spread_ms'):.2f} |")
PY
  echo
  echo "Every run: \`runs.tsv\`; raw reports, timeseries and the server's counts: \`raw/\`."
} > "$OUT/summary.md"
cat "$OUT/summary.md"

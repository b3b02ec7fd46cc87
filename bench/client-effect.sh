#!/usr/bin/env bash
# bench/client-effect.sh - what the client does to the server it measures: twelve serve (one
# worker on CPU 0, capped at 50% of a core) under wrk and under twelve bench in turn (-t1 -c$CONNS
# keep-alive json on CPU 1), perf sampling CPU 0 in the middle of each run. Prints, per kernel
# or user symbol, the share of CPU 0's samples per 100k req/s under each client and their
# difference, largest first each way: where the server spends more per request under one client.
#
# Usage: bench/client-effect.sh [OUTDIR]   (default bench/runs/<date>-client-effect)
# Env:   DURATION=8 (seconds)  CONNS=256  PORT=8090
# Needs root (cgroup CPU cap), Debian's wrk and linux-perf, python3 and cargo. Stops what it
# starts by PID.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/bench/runs/$(date +%F)-client-effect}
DURATION=${DURATION:-8}; CONNS=${CONNS:-256}; PORT=${PORT:-8090}
mkdir -p "$OUT/raw"
. "$ROOT/bench/common.sh"
PERF_DATA=$(mktemp)
trap 'rm -f "$PERF_DATA"; stop_servers' EXIT
start_servers /json
"$ROOT/bench/cpu-quota.sh" 50 "$PORT" > "$OUT/raw/quota.log"

URL="http://127.0.0.1:$PORT/json"
for client in wrk twelve; do
  if [ "$client" = wrk ]; then
    timeout $((DURATION + 30)) taskset -c 1 wrk -t1 -c"$CONNS" -d"${DURATION}s" -H 'Host: localhost' \
      "$URL" > "$OUT/raw/$client.txt" &
  else
    timeout $((DURATION + 30)) taskset -c 1 "$BIN" bench "$URL" --cpus 1 -t1 -c"$CONNS" \
      -d"${DURATION}s" --warmup 0 -H 'Host: localhost' --json > "$OUT/raw/$client.json" &
  fi
  load=$!
  sleep 2
  perf record -q -C 0 -e cpu-clock -F 2999 -o "$PERF_DATA" -- sleep $((DURATION - 4)) 2>/dev/null
  wait "$load"
  perf report -i "$PERF_DATA" --no-children --sort sym --stdio 2>/dev/null > "$OUT/raw/perf-$client.txt"
done
"$ROOT/bench/cpu-quota.sh" off "$PORT" >> "$OUT/raw/quota.log"

WRK_RPS=$(awk '/^Requests\/sec/{print $2}' "$OUT/raw/wrk.txt")
TWELVE_RPS=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rps"])' "$OUT/raw/twelve.json")
python3 - "$OUT" "$WRK_RPS" "$TWELVE_RPS" > "$OUT/diff.txt" <<'EOF'
import re, sys
out, rps = sys.argv[1], {"wrk": float(sys.argv[2]), "twelve": float(sys.argv[3])}
share = {}
for client in rps:
    for line in open(f"{out}/raw/perf-{client}.txt"):
        m = re.match(r"\s+([0-9.]+)%\s+(.*\S)", line)
        if m and "safe_halt" not in m.group(2):  # idle (the cap's throttled half) left out
            share.setdefault(m.group(2), {})[client] = float(m.group(1)) / rps[client] * 1e5
print(f"req/s: wrk {rps['wrk']:.0f}, twelve bench {rps['twelve']:.0f}")
total = {c: sum(v.get(c, 0) for v in share.values()) for c in rps}
print(f"busy samples (% of CPU 0) per 100k req/s: wrk {total['wrk']:.2f}, "
      f"twelve bench {total['twelve']:.2f} ({total['wrk'] / total['twelve']:.3f} x)")
rows = sorted(share.items(), key=lambda kv: kv[1].get("twelve", 0) - kv[1].get("wrk", 0))
# Both ends: which client makes the server spend more per request depends on the load (-c).
for title, part in (("more under wrk", rows[:20]), ("more under twelve bench", rows[::-1][:20])):
    print(f"\n{title}:\n  diff    wrk  twelve  symbol")
    for sym, v in part:
        w, t = v.get("wrk", 0), v.get("twelve", 0)
        print(f"{w - t:6.3f} {w:6.3f} {t:6.3f}  {sym[:80]}")
EOF
cat "$OUT/diff.txt"

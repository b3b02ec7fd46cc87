#!/usr/bin/env bash
# bench/coalesce.sh - what `twelve bench --coalesce auto` changes against `--coalesce off`:
# req/s, p50, p99 and client CPU per request, at low and high concurrency, against nginx capped
# at 50% of CPU 0 (server-bound) and uncapped (client-bound). Interleaved rounds (off, auto,
# off, auto, ...), client on CPU 1. One TSV line per run.
#
# Usage: bench/coalesce.sh [OUTDIR]      (default bench/runs/<date>-coalesce-latency)
# Env:   ROUNDS=3  DURATION_S=5
# Needs root (cgroup CPU cap), Debian's nginx, and cargo. Stops what it starts by PID.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/bench/runs/$(date +%F)-coalesce-latency}
ROUNDS=${ROUNDS:-3}; DURATION_S=${DURATION_S:-5}
mkdir -p "$OUT/raw"
(cd "$ROOT" && RUSTFLAGS="-C target-cpu=native" cargo build -q --profile bench-bin)
BIN="$ROOT/target/bench-bin/twelve"
cleanup() {
  "$ROOT/bench/cpu-quota.sh" off 8081 >/dev/null 2>&1 || true
  "$ROOT/bench/start-peers.sh" stop >/dev/null 2>&1 || true
}
trap cleanup EXIT
SERVER_CPU=0 "$ROOT/bench/start-peers.sh" nginx > "$OUT/raw/peers.log"
for _ in $(seq 50); do curl -sf http://127.0.0.1:8081/json >/dev/null && break; sleep 0.2; done
{
  echo "# twelve bench --coalesce auto against off"
  echo
  echo "- date: $(date -u +%FT%TZ)"
  echo "- twelve: $("$BIN" --version)"
  echo "- kernel: $(uname -r); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "- nginx (bench/peers/nginx-tfb.conf) on CPU 0 (one worker); client -t1 on CPU 1, ${DURATION_S}s after 1s warm-up"
  echo "- command: \`bench/coalesce.sh\` (ROUNDS=$ROUNDS)"
} > "$OUT/README.md"
TSV="$OUT/runs.tsv"
echo -e "server\tconnections\tcoalesce\tround\trps\tp50_us\tp99_us\tcpu_us_per_req\tnaps" > "$TSV"
for mode in capped uncapped; do
  if [ $mode = capped ]; then "$ROOT/bench/cpu-quota.sh" 50 8081 > "$OUT/raw/quota.log"; fi
  for c in 16 256; do
    for ((r = 1; r <= ROUNDS; r++)); do
      for co in off auto; do
        f="$OUT/raw/$mode-c$c-$co-$r.json"
        TIMEFORMAT='%U %S'
        { time "$BIN" bench http://127.0.0.1:8081/json --cpus 1 -t1 -c"$c" -d"${DURATION_S}s" \
            --warmup 1s --coalesce "$co" -H 'Host: localhost' --json > "$f" 2> "$f.err"; } 2> "$f.time"
        read -r u s < "$f.time"
        python3 - "$f" "$u" "$s" "$mode" "$c" "$co" "$r" >> "$TSV" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); u, s = float(sys.argv[2]), float(sys.argv[3])
lat = d["latency"]["corrected"]
naps = sum(w["naps"] for w in d["client"]["workers"])
# CPU of the whole process over warm-up and run, divided by measured requests: an upper bound
print("\t".join(map(str, [f"nginx-{sys.argv[4]}", sys.argv[5], sys.argv[6], sys.argv[7],
    round(d["rps"]), lat["p50_us"], lat["p99_us"], round(1e6 * (u + s) / d["requests"], 3), naps])))
PY
      done
    done
  done
  if [ $mode = capped ]; then "$ROOT/bench/cpu-quota.sh" off 8081 >> "$OUT/raw/quota.log"; fi
done
python3 - "$TSV" > "$OUT/summary.md" <<'PY'
import csv, sys, statistics as st
from collections import defaultdict
g = defaultdict(list)
for r in csv.DictReader(open(sys.argv[1]), delimiter="\t"):
    g[(r["server"], r["connections"], r["coalesce"])].append(r)
print("| server | -c | coalesce | req/s | p50 µs | p99 µs | client CPU µs/req | naps per run |")
print("|---|---|---|---|---|---|---|---|")
for (srv, c, co), rs in g.items():
    m = lambda k: st.median(float(r[k]) for r in rs)
    print(f"| {srv} | {c} | {co} | {m('rps'):,.0f} | {m('p50_us'):.1f} | {m('p99_us'):.1f} | {m('cpu_us_per_req'):.2f} | {m('naps'):,.0f} |")
PY
cat "$OUT/summary.md"

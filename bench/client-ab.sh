#!/usr/bin/env bash
# bench/client-ab.sh - one `twelve bench` build against another, as clients of the same capped
# server: what a change to the load generator did to its own CPU per request and to the req/s
# it measures. nginx (bench/peers/nginx-tfb.conf, port 8081) is the server: pinned to CPU 0, one worker,
# capped at 50% of a core; the client on CPU 1; rounds alternate A B A B ..., medians quoted.
#
# Usage: bench/client-ab.sh A_BIN B_BIN [OUTDIR]   (default bench/runs/<date>-client-ab)
# Env:   ROUNDS=5  DURATION=5s  CONNS=256  PIPELINE=1
# Writes OUTDIR/README.md, runs.tsv (one row per run) and summary.md; raw/ holds every report.
# Needs root (cgroup CPU cap) and Debian's nginx. Stops what it started, by PID.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
A=${1:?usage: client-ab.sh A_BIN B_BIN [OUTDIR]}; B=${2:?usage: client-ab.sh A_BIN B_BIN [OUTDIR]}
OUT=${3:-$ROOT/bench/runs/$(date +%F)-client-ab}
ROUNDS=${ROUNDS:-5}; DURATION=${DURATION:-5s}; CONNS=${CONNS:-256}; PIPELINE=${PIPELINE:-1}
mkdir -p "$OUT/raw"
cleanup() {
  "$ROOT/bench/cpu-quota.sh" off 8081 >/dev/null 2>&1 || true
  "$ROOT/bench/start-peers.sh" stop >/dev/null 2>&1 || true
}
trap cleanup EXIT
ulimit -n "$(ulimit -Hn)"
SERVER_CPU=0 "$ROOT/bench/start-peers.sh" nginx > "$OUT/raw/peers.log"
for _ in $(seq 50); do curl -sf -o /dev/null http://127.0.0.1:8081/json && break; sleep 0.2; done
"$ROOT/bench/cpu-quota.sh" 50 8081 > "$OUT/raw/quota.log"
{
  echo "# twelve bench A against B as clients of capped nginx"
  echo
  echo "- date: $(date -u +%FT%TZ); kernel $(uname -r); $(nproc) CPUs"
  echo "- A: \`$A\`: $("$A" --version | head -1)"
  echo "- B: \`$B\`: $("$B" --version | head -1)"
  echo "- server: nginx (bench/peers/nginx-tfb.conf), CPU 0, one worker, capped at 50%"
  echo "- client: \`taskset -c 1 BIN bench http://127.0.0.1:8081/json -c $CONNS -p $PIPELINE -d $DURATION --cpus 1 --json\`"
  echo "- rounds: $ROUNDS, A and B alternating, A first in odd rounds"
} > "$OUT/README.md"
echo -e "round\tclient\trequests\trps\tclient_ns_per_req" > "$OUT/runs.tsv"
for ((r = 1; r <= ROUNDS; r++)); do
  order=(A B); [ $((r % 2)) = 0 ] && order=(B A)
  for who in "${order[@]}"; do
    bin=$A; [ "$who" = B ] && bin=$B
    f=$OUT/raw/$who-$r.json
    timeout 60 taskset -c 1 "$bin" bench http://127.0.0.1:8081/json -c "$CONNS" -p "$PIPELINE" \
      -d "$DURATION" --cpus 1 --json > "$f" 2> "$f.err"
    python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
print(sys.argv[2], sys.argv[3], d["requests"], d["rps"], d["client"]["cpu_ns_per_request"], sep="\t")' \
      "$f" "$r" "$who" >> "$OUT/runs.tsv"
  done
done
python3 - "$OUT/runs.tsv" > "$OUT/summary.md" <<'PY'
import csv, statistics as st, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter='\t'))
med = lambda who, k: st.median(float(r[k]) for r in rows if r['client'] == who)
print("| client | req/s median | client CPU ns/req median |")
print("|---|---|---|")
for who in ('A', 'B'):
    print(f"| {who} | {med(who, 'rps'):,.0f} | {med(who, 'client_ns_per_req'):,.0f} |")
print(f"\nB/A: req/s {med('B', 'rps') / med('A', 'rps'):.3f}, client CPU per request "
      f"{med('B', 'client_ns_per_req') / med('A', 'client_ns_per_req'):.3f}")
PY
cat "$OUT/summary.md"

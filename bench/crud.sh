#!/usr/bin/env bash
# bench/crud.sh - HttpArena's crud profile (issue 34) on twelve serve --database: its load
# generator, gcannon, rotating over the profile's 20 request templates (bench/crud-requests/,
# HttpArena's requests/crud-*.raw: 75% cached reads of random ids 1-50,000, 15% updates, 5%
# list pages of category office, 5% creates of new ids, then upserts), reconnecting every 200
# requests (-r 200), as HttpArena runs it. PostgreSQL (the seed of crates/pg/tests/seed.sql:
# HttpArena's 100,000 items) and gcannon share CPU 1; the server runs one worker on CPU 0,
# capped at half of it (bench/cpu-quota.sh 50). The metric is requests per server CPU-second
# (utime + stime of the server process over the run).
#
# Peers: no Rust entry of HttpArena subscribes to crud (its entries are C#, Clojure,
# TypeScript and Python frameworks at HttpArena 28606baf), so the run measures twelve alone;
# PEER_CMD (a command line listening on 127.0.0.1:8187 against DATABASE_URL) adds one.
#
# gcannon: HttpArena's load generator (github.com/MDA2AV/gcannon), built outside the
# repository; GCANNON names the binary.
#
# Usage: ROUNDS=3 DURATION_S=8 CONNS=4096 bench/crud.sh [OUT_DIR]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-3}; DURATION_S=${DURATION_S:-8}; WARMUP_S=${WARMUP_S:-2}; CONNS=${CONNS:-4096}
OUT=${1:-$ROOT/bench/runs/$(date -u +%F)-crud}
BIN=${TWELVE_BIN:-$ROOT/target/bench-bin/twelve}
GCANNON=${GCANNON:-/tmp/pacing-peers/gcannon/gcannon}
PG=/tmp/bench-pg-crud; . "$ROOT/bench/pg.sh"
DATABASE_URL="postgres://postgres@127.0.0.1:5433/postgres"
mkdir -p "$OUT/raw"
export QUOTA_CGROUP=${QUOTA_CGROUP:-twelve-crud}
[ -x "$BIN" ] || (cd "$ROOT" && RUSTFLAGS="-C target-cpu=native" cargo build -q --profile bench-bin -p twelve --bin twelve)
[ -x "$GCANNON" ] || { echo "bench/crud.sh: no gcannon at $GCANNON (set GCANNON)" >&2; exit 2; }

PIDS=()
cleanup() {
  "$ROOT/bench/cpu-quota.sh" off 8091 >/dev/null 2>&1 || true
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  stop_pg
}
trap cleanup EXIT

# PostgreSQL on CPU 1, TCP on 127.0.0.1:5433 (beside bench/db.sh's 5432).
start_pg 5433
reseed() { # the creates' ids (100001 on) gone again: each run starts from the same table
  as_pg psql -X -q -h "$PG" -p 5433 -U postgres -d postgres -c "DELETE FROM items WHERE id > 100000;" >/dev/null
}

declare -A PORT=([twelve]=8091 [peer]=8187)
SERVERS=(twelve)
ulimit -n "$(ulimit -Hn)"
taskset -c 0 "$BIN" serve --listen 127.0.0.1:8091 --cpus 0 --no-metrics \
  --database "$DATABASE_URL" > "$OUT/raw/twelve.log" 2>&1 &
PIDS+=($!)
if [ -n "${PEER_CMD:-}" ]; then
  DATABASE_URL=$DATABASE_URL taskset -c 0 bash -c "$PEER_CMD" > "$OUT/raw/peer.log" 2>&1 &
  PIDS+=($!); SERVERS+=(peer)
fi
sleep 2
# Only the ports of the servers started here: another process listening on a peer's port is
# not ours to move.
PORTS=(); for s in "${SERVERS[@]}"; do PORTS+=("${PORT[$s]}"); done
"$ROOT/bench/cpu-quota.sh" 50 "${PORTS[@]}" > "$OUT/raw/quota.txt"

FILES=$(ls "$ROOT"/bench/crud-requests/crud-*.raw | sort | paste -sd, -)
ticks() { local pid; pid=$(ss -Hltnp "sport = :$1" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2)
  awk '{print $12 + $13}' <(sed 's/.*) //' "/proc/$pid/stat"); }
HZ=$(getconf CLK_TCK)
TSV="$OUT/runs.tsv"
echo -e "server\tround\trequests\t2xx\t4xx\t5xx\terrors\twall_s\tsrv_cpu_s\treq_per_srv_cpu_s\tp99_us" > "$TSV"
load() { # PORT SECONDS OUT
  taskset -c 1 "$GCANNON" "http://127.0.0.1:$1" --raw "$FILES" -c "$CONNS" -t 1 -d "${2}s" \
    -p 1 -r 200 --json > "$3" 2> "$3.err" || true
}
for r in $(seq "$ROUNDS"); do
  for s in "${SERVERS[@]}"; do
    reseed
    f="$OUT/raw/crud-$s-$r.json"
    load "${PORT[$s]}" "$WARMUP_S" "$f.warm"
    t0=$(ticks "${PORT[$s]}")
    load "${PORT[$s]}" "$DURATION_S" "$f"
    t1=$(ticks "${PORT[$s]}")
    python3 - "$f" "$s" "$r" "$t0" "$t1" "$HZ" >> "$TSV" <<'PY'
import json, sys
f, s, r, t0, t1, hz = sys.argv[1:]
j = json.load(open(f))
cpu = (float(t1) - float(t0)) / float(hz)
st, err = j['status'], j['errors']
n = j['responses']
print('\t'.join(map(str, [s, r, n, st['2xx'], st['4xx'], st['5xx'] + st['other'],
                          sum(err.values()), j['elapsed_sec'], round(cpu, 2),
                          round(n / cpu) if cpu > 0 else 0, j['latency_us']['p99']])))
PY
  done
done
python3 - "$TSV" > "$OUT/summary.md" <<'PY'
import csv, statistics as st, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter='\t'))
by = {}
for r in rows:
    by.setdefault(r['server'], []).append(r)
med = {s: st.median(float(r['req_per_srv_cpu_s']) for r in rs) for s, rs in by.items()}
print('| server | median req/s | median req per server CPU-s | twelve / server | 4xx | 5xx+other | errors | median p99 ms |')
print('|---|---|---|---|---|---|---|---|')
for s, rs in by.items():
    rps = st.median(float(r['requests']) / float(r['wall_s']) for r in rs)
    p99 = st.median(float(r['p99_us']) for r in rs) / 1000
    ratio = med['twelve'] / med[s] if med.get(s) else 0
    tot = lambda k: sum(int(r[k]) for r in rs)
    print(f"| {s} | {rps:.0f} | {med[s]:.0f} | {ratio:.3f} | {tot('4xx')} | {tot('5xx')} | {tot('errors')} | {p99:.2f} |")
PY
cat "$OUT/summary.md"

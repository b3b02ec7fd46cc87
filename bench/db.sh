#!/usr/bin/env bash
# bench/db.sh - issue 34's database benchmark: TechEmpower's db, queries (20), fortunes and
# updates (20), and HttpArena's async-db, on twelve serve --database and the TechEmpower
# entries of xitca-web (barebone) and may-minihttp, interleaved (round r: every test, every
# server in turn). PostgreSQL and wrk share CPU 1; each server runs one worker on CPU 0,
# capped at half of it (bench/cpu-quota.sh 50). The metric is requests per server CPU-second
# (utime + stime of the server process over the run, from /proc/PID/stat): the database's own
# CPU is the same for all.
#
# Peers are built by hand outside the repository from TechEmpower's FrameworkBenchmarks
# (frameworks/Rust/{xitca-web,may-minihttp}, their git dependencies fetched and patched to
# paths, the database URL set to postgres://postgres@127.0.0.1:5432/postgres and the port to
# 8085/8083): XITCA_DB_BIN and MAY_DB_BIN name the binaries; a missing one is left out.
# HttpArena's async-db is measured against HttpArena's actix entry (frameworks/actix, the only
# Rust entry with async-db; deadpool-postgres, a connection per request in flight), built from
# HttpArena's tree with its Cargo.toml (ACTIX_DB_BIN), one worker (WORKERS=1), its pool at
# DATABASE_MAX_CONN=64 (under this PostgreSQL's max_connections=100). async-db runs with
# ARENA_CONNS connections (HttpArena's profile: 1,024). An answer shorter than 64 bytes is the
# profile's empty answer ({"items":[],"count":0}, what a server gives when the database did
# not answer): the bytes per response are recorded and the run fails if one round's average
# is that short.
#
# Other builds of twelve run beside it, interleaved, for A/B: TWELVE_MORE="base=/path/twelve
# mi=/path/twelve2" (each NAME on port 8091, 8092, ...; NAME must not be a peer's).
#
# Usage: ROUNDS=3 DURATION_S=8 CONNS=256 ARENA_CONNS=1024 TESTS="db queries fortunes updates
#        async-db" [TWELVE_MORE="base=BIN"] bench/db.sh [OUT_DIR]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-3}; DURATION_S=${DURATION_S:-8}; WARMUP_S=${WARMUP_S:-2}; CONNS=${CONNS:-256}
ARENA_CONNS=${ARENA_CONNS:-1024}; TESTS=${TESTS:-db queries fortunes updates async-db}
OUT=${1:-$ROOT/bench/runs/$(date -u +%F)-db}
BIN=${TWELVE_BIN:-$ROOT/target/bench-bin/twelve}
XITCA=${XITCA_DB_BIN:-/tmp/peers/xitca-tfb/frameworks/Rust/xitca-web/target/release/xitca-web-barebone}
MAY=${MAY_DB_BIN:-/tmp/peers/may-tfb/frameworks/Rust/may-minihttp/target/release/may-minihttp}
ACTIX=${ACTIX_DB_BIN:-/tmp/peers/actix/target/release/httparena-actix}
PG=/tmp/bench-pg; . "$ROOT/bench/pg.sh"
# A cgroup of its own: other scripts running at once keep theirs.
export QUOTA_CGROUP=${QUOTA_CGROUP:-dbbench}
mkdir -p "$OUT/raw"

PIDS=()
cleanup() {
  "$ROOT/bench/cpu-quota.sh" off 8090 8091 8092 8093 8085 8083 8087 >/dev/null 2>&1 || true
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  stop_pg
}
trap cleanup EXIT

# PostgreSQL on CPU 1: TCP on 127.0.0.1:5432 (what the peers' drivers speak) and a socket.
start_pg 5432

# The servers on CPU 0, one worker each.
declare -A PORT=([twelve]=8090 [xitca]=8085 [may]=8083 [actix]=8087)
SERVERS=(twelve)
ulimit -n "$(ulimit -Hn)"
taskset -c 0 "$BIN" serve --listen 127.0.0.1:8090 --cpus 0 --no-metrics \
  --database "postgres://postgres@127.0.0.1:5432/postgres" > "$OUT/raw/twelve.log" 2>&1 &
PIDS+=($!)
MORE=()
port=8091
for m in ${TWELVE_MORE:-}; do
  name=${m%%=*}; PORT[$name]=$port
  taskset -c 0 "${m#*=}" serve --listen "127.0.0.1:$port" --cpus 0 --no-metrics \
    --database "postgres://postgres@127.0.0.1:5432/postgres" > "$OUT/raw/$name.log" 2>&1 &
  PIDS+=($!); SERVERS+=("$name"); MORE+=("$name"); port=$((port + 1))
done
if [ -x "$XITCA" ]; then taskset -c 0 "$XITCA" > "$OUT/raw/xitca.log" 2>&1 & PIDS+=($!); SERVERS+=(xitca); fi
if [ -x "$MAY" ]; then taskset -c 0 "$MAY" > "$OUT/raw/may.log" 2>&1 & PIDS+=($!); SERVERS+=(may); fi
if [ -x "$ACTIX" ]; then
  WORKERS=1 PORT=${PORT[actix]} DATABASE_URL="postgres://postgres@127.0.0.1:5432/postgres" \
    DATABASE_MAX_CONN=64 taskset -c 0 "$ACTIX" > "$OUT/raw/actix.log" 2>&1 & PIDS+=($!); SERVERS+=(actix)
fi
sleep 2
ports=(); for s in "${SERVERS[@]}"; do ports+=("${PORT[$s]}"); done
"$ROOT/bench/cpu-quota.sh" 50 "${ports[@]}" > "$OUT/raw/quota.txt"
# Which server runs which test: the TechEmpower ones on their entries, async-db on actix.
runs() { # TEST SERVER
  for m in "${MORE[@]}"; do [ "$2" = "$m" ] && return 0; done
  case $1:$2 in
    *:twelve | db:xitca | db:may | queries:xitca | queries:may | fortunes:xitca | fortunes:may \
      | updates:xitca | updates:may | async-db:actix) return 0 ;;
  esac
  return 1
}

url() { # SERVER TEST
  local base="http://127.0.0.1:${PORT[$1]}"
  case $2 in
    db) echo "$base/db" ;;
    queries) echo "$base/queries?q=20" ;;
    fortunes) echo "$base/fortunes" ;;
    updates) echo "$base/updates?q=20" ;;
    async-db) echo "$base/async-db?min=10&max=50&limit=20" ;;
  esac
}
ticks() { local pid; pid=$(ss -Hltnp "sport = :$1" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2)
  awk '{print $12 + $13}' <(sed 's/.*) //' "/proc/$pid/stat"); }
HZ=$(getconf CLK_TCK)
TSV="$OUT/runs.tsv"
# wrk's "N requests in Ts, X read" as bytes per response.
bytes_per() { awk '/requests in/{ v = $5; u = v; sub(/[A-Za-z]+$/, "", v); sub(/^[0-9.]+/, "", u)
  m = (u == "GB") ? 1073741824 : (u == "MB") ? 1048576 : (u == "KB") ? 1024 : 1
  printf "%.0f", v * m / $1 }' "$1"; }
echo -e "test\tserver\tround\trequests\tnon2xx\twall_s\tsrv_cpu_s\treq_per_srv_cpu_s\tbytes_per_resp" > "$TSV"
for r in $(seq "$ROUNDS"); do
  for t in $TESTS; do
    c=$CONNS; [ "$t" = async-db ] && c=$ARENA_CONNS
    for s in "${SERVERS[@]}"; do
      runs "$t" "$s" || continue
      u=$(url "$s" "$t"); f="$OUT/raw/$t-$s-$r"
      taskset -c 1 wrk -t1 -c"$c" -d"${WARMUP_S}s" "$u" > "$f.warm" 2>&1 || true
      t0=$(ticks "${PORT[$s]}")
      taskset -c 1 wrk -t1 -c"$c" -d"${DURATION_S}s" --latency "$u" > "$f" 2>&1
      t1=$(ticks "${PORT[$s]}")
      n=$(awk '/requests in/{print $1}' "$f"); bad=$(awk '/Non-2xx/{print $NF}' "$f"); bad=${bad:-0}
      cpu=$(awk -v a="$t0" -v b="$t1" -v hz="$HZ" 'BEGIN{print (b - a) / hz}')
      bpr=$(bytes_per "$f")
      echo -e "$t\t$s\t$r\t$n\t$bad\t$DURATION_S\t$cpu\t$(awk -v n="$n" -v c="$cpu" 'BEGIN{printf "%.0f", (c > 0 ? n / c : 0)}')\t$bpr" >> "$TSV"
      if [ "$t" = async-db ] && [ "$bpr" -lt 64 ]; then
        echo "db.sh: $s answered async-db with $bpr bytes per response (the empty answer): see $f" >&2
        exit 1
      fi
    done
  done
done
python3 - "$TSV" "$TESTS" > "$OUT/summary.md" <<'PY'
import csv, statistics as st, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter='\t'))
tests = sys.argv[2].split()
print('| test | server | median req/s | median req per server CPU-s | twelve / server | non-2xx |')
print('|---|---|---|---|---|---|')
for t in tests:
    by = {}
    for r in rows:
        if r['test'] == t:
            by.setdefault(r['server'], []).append(r)
    med = {s: st.median(float(r['req_per_srv_cpu_s']) for r in rs) for s, rs in by.items()}
    for s, rs in by.items():
        rps = st.median(float(r['requests']) / float(r['wall_s']) for r in rs)
        ratio = med['twelve'] / med[s] if med.get(s) else 0
        bad = sum(int(r['non2xx']) for r in rs)
        print(f'| {t} | {s} | {rps:.0f} | {med[s]:.0f} | {ratio:.3f} | {bad} |')
PY
cat "$OUT/summary.md"

#!/usr/bin/env bash
# bench/open-syscalls.sh - where the open model's client CPU goes, per request: two builds of
# twelve bench (BASE_BIN and BIN) beside oha and wrk2, each alone on CPU 1 with one thread, into
# one twelve serve on CPU 0, GET /json, -c64, at each of RATES; rounds interleaved
# (bench/order.sh: the list one way, then back, rotated by one every two rounds), medians
# quoted. Each
# client runs under `perf stat`: its CPU (task-clock of every thread), context switches and the
# syscalls it makes per response it counted; beside it the server's CPU per request (its
# threads' schedstat) and, for twelve, the schedule lag (the JSON's latency.queue_wait p50 and
# p99). For the profile behind the counts, `perf record -F 20000 -e cpu-clock -g` of one
# client's run (see the run's README).
#
# Usage: bench/open-syscalls.sh [OUTDIR]        (default bench/runs/<date>-open-syscalls)
# Env:   ROUNDS=4 (even: every pair in both orders) DURATION=3 (seconds per run) RATES="10000" PORT=8192
#        BIN (default: target/bench-bin/twelve, built here)  BASE_BIN (default: BIN)
#        CLIENTS="base twelve oha wrk2"  WRK2=/tmp/pacing-peers/wrk2/wrk
#        OHA=/tmp/pacing-peers/cargo-root/bin/oha   (peers: see bench/pacing.sh's header)
# The syscall tracepoints cost each client a little per syscall counted (wrk2 makes the most),
# so CPU figures for the targets come from bench/pacing.sh, which counts none.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/bench/runs/$(date +%F)-open-syscalls}
ROUNDS=${ROUNDS:-4}; DURATION_S=${DURATION:-3}; RATES=${RATES:-10000}; PORT=${PORT:-8192}
WRK2=${WRK2:-/tmp/pacing-peers/wrk2/wrk}
OHA=${OHA:-/tmp/pacing-peers/cargo-root/bin/oha}
if [ -z "${BIN:-}" ]; then
  (cd "$ROOT" && cargo build -q --profile bench-bin --bin twelve)
  BIN=$ROOT/target/bench-bin/twelve
fi
BASE_BIN=${BASE_BIN:-$BIN}
read -r -a CLIENTS <<< "${CLIENTS:-base twelve oha wrk2}"
for p in "$WRK2" "$OHA" "$BIN" "$BASE_BIN" /usr/bin/perf; do
  [ -x "$p" ] || { echo "missing $p (see the header of bench/open-syscalls.sh)" >&2; exit 2; }
done
mkdir -p "$OUT/raw"
SRV_PID=
stop_all() { if [ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; then wait "$SRV_PID" 2>/dev/null || true; fi; }
trap stop_all EXIT
ulimit -n "$(ulimit -Hn)"
taskset -c 0 "$BIN" serve --listen "127.0.0.1:$PORT" --cpus 0 > "$OUT/raw/twelve-serve.log" 2>&1 &
SRV_PID=$!
URL=http://127.0.0.1:$PORT/json
for _ in $(seq 50); do curl -sf "$URL" >/dev/null && break; sleep 0.2; done
server_ns() { cat /proc/"$SRV_PID"/task/*/schedstat | awk '{s += $1} END {printf "%.0f", s}'; }
EVENTS=task-clock,context-switches
for s in io_uring_enter clock_nanosleep epoll_wait epoll_pwait2 epoll_ctl sendto recvfrom recvmsg \
  read write writev futex; do EVENTS+=",syscalls:sys_enter_$s"; done
{
  echo "# twelve bench's open model: syscalls and CPU per request beside oha and wrk2"
  echo
  echo "- date: $(date -u +%FT%TZ); kernel $(uname -r); $(nproc) CPUs"
  echo "- twelve: $("$BIN" --version 2>/dev/null | head -1) (BIN); base: $("$BASE_BIN" --version 2>/dev/null | head -1) (BASE_BIN)"
  echo "- commit: $(git -C "$ROOT" rev-parse --short=12 HEAD)"
  echo "- command: \`ROUNDS=$ROUNDS DURATION=$DURATION_S RATES=\"$RATES\" bench/open-syscalls.sh\`"
  echo "- every client one thread on CPU 1 for ${DURATION_S}s under perf stat; twelve serve on CPU 0"
} > "$OUT/README.md"
TSV=$OUT/runs.tsv
echo -e "rate\tclient\tround\tresponses\tclient_cpu_ms\tclient_cs\tserver_cpu_ms\tlag_p50_us\tlag_p99_us\tsyscalls" > "$TSV"
# Round R's order: rotated, reversed on even rounds (bench/order.sh).
. "$ROOT/bench/order.sh"
for rate in $RATES; do
  for R in $(seq "$ROUNDS"); do
    for c in $(round_order "$R" "${CLIENTS[@]}"); do
      f=$OUT/raw/r$rate-$c-$R
      case $c in
        base|twelve)
          b=$BIN; [ "$c" = base ] && b=$BASE_BIN
          cmd=("$b" bench "$URL" --cpus 1 -t1 -c64 -d"${DURATION_S}s" --warmup 0 --timeout 5s -R "$rate" --json) ;;
        oha) cmd=("$OHA" --no-tui --output-format json -z "${DURATION_S}s" -c 64 -q "$rate" --latency-correction "$URL") ;;
        wrk2) cmd=("$WRK2" -t1 -c64 -d"${DURATION_S}s" -R"$rate" --latency "$URL") ;;
      esac
      s0=$(server_ns)
      perf stat -x, -e "$EVENTS" -o "$f.perf" -- taskset -c 1 timeout 120 "${cmd[@]}" > "$f.out" 2> "$f.err" || true
      s1=$(server_ns)
      python3 - "$f" "$c" "$rate" "$R" "$s0" "$s1" >> "$TSV" <<'PY'
import json, re, sys
f, c, rate, r, s0, s1 = sys.argv[1:7]
out = open(f + ".out").read()
lag = ("-", "-")
if c in ("base", "twelve"):
    j = json.loads(out)
    n = j["requests"]
    q = j["latency"].get("queue_wait") or {}
    lag = (q.get("p50_us", "-"), q.get("p99_us", "-"))
elif c == "oha":
    n = sum(json.loads(out)["statusCodeDistribution"].values())
else:
    n = int(re.search(r"(\d+) requests in", out).group(1))
d = {}
for line in open(f + ".perf"):
    p = line.strip().split(",")
    if len(p) > 2 and re.fullmatch(r"[\d.]+", p[0]):
        d[p[2].replace("syscalls:sys_enter_", "")] = float(p[0])
calls = ",".join(f"{k}={v / n:.3f}" for k, v in d.items() if k not in ("task-clock", "context-switches") and v > 0)
srv = (int(s1) - int(s0)) / 1e6
print(f"{rate}\t{c}\t{r}\t{n}\t{d['task-clock']:.1f}\t{int(d['context-switches'])}\t{srv:.1f}\t{lag[0]}\t{lag[1]}\t{calls}")
PY
      tail -1 "$TSV"
    done
  done
done
python3 - "$TSV" > "$OUT/summary.md" <<'PY'
import csv, statistics as st, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
print("# Summary (medians over the rounds)\n")
print("| rate | client | µs CPU/req | cs/req | server µs CPU/req | lag p50 µs | lag p99 µs | syscalls per request (median round) |")
print("|---|---|---|---|---|---|---|---|")
for rate in dict.fromkeys(r["rate"] for r in rows):
    for c in dict.fromkeys(r["client"] for r in rows):
        rs = [r for r in rows if r["rate"] == rate and r["client"] == c]
        if not rs:
            continue
        per = lambda k, s=1e3: st.median(float(r[k]) * s / int(r["responses"]) for r in rs)
        lag = lambda k: st.median(float(r[k]) for r in rs) if rs[0][k] != "-" else "-"
        mid = sorted(rs, key=lambda r: float(r["client_cpu_ms"]) / int(r["responses"]))[len(rs) // 2]
        print(f"| {rate} | {c} | {per('client_cpu_ms'):.2f} | {per('client_cs', 1):.3f} | {per('server_cpu_ms'):.2f} | {lag('lag_p50_us')} | {lag('lag_p99_us')} | {mid['syscalls'].replace(',', ', ')} |")
PY
cat "$OUT/summary.md"

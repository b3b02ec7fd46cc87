#!/usr/bin/env bash
# bench/sleep-cost.sh - what one sleep and its wake-up cost the thread that sleeps, on this host:
# the floor under the CPU per request of a server at a fixed rate (one wake-up per lone
# request) and of a client that keeps a schedule or takes each answer as it comes.
#
# crates/sys/examples/sleep_cost.rs sleeps to absolute deadlines RATE times a second and prints
# its thread's CPU time per sleep (CLOCK_THREAD_CPUTIME_ID: what the scheduler and a cgroup
# charge, the context switch included) and the lateness of its wake-ups. Each round runs, for
# every CPU of CPUS and rate of RATES:
#   idle     the probe alone: the CPU idles (halts) between sleeps
#   busy     beside a spinning thread at nice 19 on the same CPU: the CPU never idles, each
#            wake-up switches from that thread
#   haltpoll the probe alone with the guest's halt polling on (HALTPOLL_NS, cpuidle-haltpoll's
#            guest_halt_poll_ns; restored after each run), where this kernel has it
#
# Usage: ROUNDS=2 DURATION=3 RATES="1000 10000 40000" CPUS="0 1" HALTPOLL_NS=200000 bench/sleep-cost.sh [OUT]
# (DURATION in seconds per probe run)
# Writes OUT/sleep-cost.tsv and OUT/summary.md (medians over rounds). Run it on a quiet host.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/bench/runs/$(date -u +%F)-sleep-cost}
ROUNDS=${ROUNDS:-2}; SECS=${DURATION:-3}; RATES=${RATES:-1000 10000 40000}
CPUS=${CPUS:-0 1}; HALTPOLL_NS=${HALTPOLL_NS:-200000}
HP=/sys/module/haltpoll/parameters/guest_halt_poll_ns
mkdir -p "$OUT"
(cd "$ROOT" && cargo build -q --release -p twelve-sys --example sleep_cost)
PROBE=$ROOT/target/release/examples/sleep_cost
MODES="idle busy"
HP_OLD=
if [ -w "$HP" ] && [ "$(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null)" = haltpoll ]; then
  HP_OLD=$(cat "$HP"); MODES="$MODES haltpoll"
fi
HOG=
cleanup() {
  [ -z "$HOG" ] || { kill "$HOG" 2>/dev/null || true; wait "$HOG" 2>/dev/null || true; }
  [ -z "$HP_OLD" ] || echo "$HP_OLD" > "$HP"
}
trap cleanup EXIT
echo -e "round\tcpu\trate\tmode\tsleeps\tswitches\tcpu_us_per_sleep\tlate_p50_us\tlate_p99_us\tlate_max_us" > "$OUT/sleep-cost.tsv"
for r in $(seq "$ROUNDS"); do
  for cpu in $CPUS; do
    for rate in $RATES; do
      for mode in $MODES; do
        case $mode in
          busy) taskset -c "$cpu" nice -n 19 sh -c 'while :; do :; done' & HOG=$! ;;
          haltpoll) echo "$HALTPOLL_NS" > "$HP" ;;
        esac
        j=$(taskset -c "$cpu" "$PROBE" "$rate" "$SECS")
        case $mode in
          busy) kill "$HOG"; wait "$HOG" 2>/dev/null || true; HOG= ;;
          haltpoll) echo "$HP_OLD" > "$HP" ;;
        esac
        python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("\t".join(sys.argv[2:] + [str(d[k]) for k in ("sleeps","switches","cpu_us_per_sleep","late_p50_us","late_p99_us","late_max_us")]))' \
          "$j" "$r" "$cpu" "$rate" "$mode" >> "$OUT/sleep-cost.tsv"
      done
    done
  done
done
python3 - "$OUT" > "$OUT/summary.md" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(f'{sys.argv[1]}/sleep-cost.tsv'), delimiter='\t'))
keys = sorted({(int(r['cpu']), int(r['rate']), r['mode']) for r in rows}, key=lambda k: (k[0], k[1], ['idle', 'busy', 'haltpoll'].index(k[2])))
print('| CPU | sleeps/s | mode | CPU µs per sleep (rounds) | median | lateness p50 µs | lateness p99 µs |')
print('|---|---|---|---|---|---|---|')
for cpu, rate, mode in keys:
    rs = [r for r in rows if (int(r['cpu']), int(r['rate']), r['mode']) == (cpu, rate, mode)]
    cost = [float(r['cpu_us_per_sleep']) for r in rs]
    med = lambda k: statistics.median(float(r[k]) for r in rs)
    print(f"| {cpu} | {rate} | {mode} | {', '.join(f'{c:.2f}' for c in cost)} | {statistics.median(cost):.2f} | {med('late_p50_us'):.1f} | {med('late_p99_us'):.1f} |")
PY
cat "$OUT/summary.md"

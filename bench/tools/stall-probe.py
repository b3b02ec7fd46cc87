#!/usr/bin/env python3
"""bench/tools/stall-probe.py SECONDS RATE [RATE ...]: the schedule lag no client can beat on this
CPU. A thread reads the monotonic clock in a tight loop for SECONDS and keeps every gap between
two reads longer than 20 us: time in which it did not run (the hypervisor ran another vCPU,
interrupts, softirqs, another task). For each RATE, a schedule of one request every 1/RATE s laid
over the same interval gives each slot that falls inside a gap the lag a perfect, zero-cost
sender would have had (the gap's end minus the slot's time); every other slot is on time. Run it
pinned where the client runs (taskset -c 1) on an otherwise idle CPU, under the normal policy: a
spinning SCHED_FIFO thread is throttled for 50 ms of every second (sched_rt_runtime_us), gaps no
client meets. Prints one JSON object: the gaps, the CPU's steal time over the run, and per rate
the slots and the lag percentiles in us. A spinning thread never sleeps, so it pays no timer or
wake-up latency: the figures bound a real client's lag from below."""
import json
import os
import sys
import time

THRESHOLD_NS = 20_000

seconds = float(sys.argv[1])
rates = [int(r) for r in sys.argv[2:]] or [1000, 10000, 40000]



def steal_ticks():
    # /proc/stat's eighth field per CPU: time the hypervisor ran something else (USER_HZ ticks).
    cpus = sorted(os.sched_getaffinity(0))
    with open("/proc/stat") as f:
        rows = {line.split()[0]: line.split() for line in f if line.startswith("cpu")}
    return sum(int(rows[f"cpu{c}"][8]) for c in cpus if f"cpu{c}" in rows)


clock = time.monotonic_ns
steal_before = steal_ticks()
gaps = []
start = clock()
end = start + int(seconds * 1e9)
last = start
while last < end:
    now = clock()
    if now - last > THRESHOLD_NS:
        gaps.append((last, now))
    last = now
stop = last
steal_ms = (steal_ticks() - steal_before) * 1000 / os.sysconf("SC_CLK_TCK")


def percentile(sorted_lags, slots, p):
    # Slots outside every gap are on time (lag 0): only the tail is kept.
    rank = int(p * slots)
    late_from = slots - len(sorted_lags)
    if rank < late_from:
        return 0.0
    return round(sorted_lags[min(len(sorted_lags) - 1, rank - late_from)] / 1e3, 1)


out = {
    "seconds": round((stop - start) / 1e9, 3),
    "threshold_us": THRESHOLD_NS / 1e3,
    "gaps": len(gaps),
    "stalled_ms": round(sum(b - a for a, b in gaps) / 1e6, 2),
    "steal_ms": round(steal_ms, 1),
    "longest_gap_us": round(max((b - a for a, b in gaps), default=0) / 1e3, 1),
    "rates": {},
}
for rate in rates:
    period = 1e9 / rate
    slots = int((stop - start) / period)
    lags = []
    for a, b in gaps:
        # Slots strictly inside (a, b): the sender could not run at their time.
        first = int((a - start) // period) + 1
        last_slot = int((b - start - 1) // period)
        for i in range(first, min(last_slot, slots - 1) + 1):
            lags.append(b - (start + i * period))
    lags.sort()
    out["rates"][str(rate)] = {
        "slots": slots,
        "late_slots": len(lags),
        "p50_us": percentile(lags, slots, 0.50),
        "p90_us": percentile(lags, slots, 0.90),
        "p99_us": percentile(lags, slots, 0.99),
        "p999_us": percentile(lags, slots, 0.999),
        "max_us": round(lags[-1] / 1e3, 1) if lags else 0.0,
    }
print(json.dumps(out))

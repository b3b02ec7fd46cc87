#!/usr/bin/env python3
"""bench/tools/timer-probe.py GAP_NS SECONDS: how late this machine's timer wakes a thread that
sleeps GAP_NS at a time for SECONDS, with the timer slack the open model's workers set (1 ns,
prctl PR_SET_TIMERSLACK; a normal thread's 50 us would be added to every sleep). Run it pinned
where the client runs (taskset -c 1). Prints one JSON object: sleeps, and the lateness
percentiles in us. The loop's own cost (a few us of Python per sleep) is in the figures: they
bound the timer's lateness from above."""
import ctypes
import json
import sys
import time

PR_SET_TIMERSLACK = 29

gap_ns, seconds = int(sys.argv[1]), float(sys.argv[2])
libc = ctypes.CDLL(None, use_errno=True)
slack_set = libc.prctl(PR_SET_TIMERSLACK, ctypes.c_ulong(1), 0, 0, 0) == 0
late = []
end = time.perf_counter_ns() + int(seconds * 1e9)
gap_s = gap_ns / 1e9
while True:
    t0 = time.perf_counter_ns()
    if t0 >= end:
        break
    time.sleep(gap_s)
    late.append(time.perf_counter_ns() - t0 - gap_ns)
late.sort()


def q(p):
    return round(late[min(len(late) - 1, int(p * len(late)))] / 1e3, 1)


print(json.dumps({"gap_ns": gap_ns, "timer_slack_1ns": slack_set, "sleeps": len(late),
                  "p50_us": q(0.50), "p90_us": q(0.90), "p99_us": q(0.99), "p999_us": q(0.999),
                  "max_us": round(late[-1] / 1e3, 1)}))

#!/usr/bin/env python3
"""bench/tools/schedule-probe.py SECONDS RATE: the schedule lag of a sender that does nothing but
keep the open model's schedule by sleeping. Slot i is due RATE-th fractions of a second after the
start; the thread sleeps until the next slot is due (1 ns of timer slack, as the open model's
workers set), and on each wake-up every slot due by then is "sent" at once with the lag of the
wake-up's time. So its lag is what this CPU's timer and wake-ups cost a client that spends
nothing per request, weighted per slot as twelve bench's schedule lag is: a wake-up that comes
late by 5 ms at 10,000 req/s makes 50 slots late, where timer-probe.py counts it once. The
loop's own cost (Python's, per wake-up) is in the figures. Where stall-probe.py (a
thread that never sleeps) is the floor for a client that spins, this is the floor for one that
sleeps between slots. Run it pinned where the client runs (taskset -c 1). Prints one JSON
object: slots, wake-ups and the lag percentiles in us."""
import ctypes
import json
import sys
import time

PR_SET_TIMERSLACK = 29

seconds, rate = float(sys.argv[1]), int(sys.argv[2])
libc = ctypes.CDLL(None, use_errno=True)
slack_set = libc.prctl(PR_SET_TIMERSLACK, ctypes.c_ulong(1), 0, 0, 0) == 0
clock = time.monotonic_ns
period = 1e9 / rate
start = clock()
slots = int(seconds * rate)
lags = []
wakeups = 0
i = 1
while i <= slots:
    due = start + i * period
    now = clock()
    if now < due:
        time.sleep((due - now) / 1e9)
        now = clock()
        wakeups += 1
    while i <= slots and start + i * period <= now:
        lags.append(now - (start + i * period))
        i += 1
lags.sort()


def q(p):
    return round(lags[min(len(lags) - 1, int(p * len(lags)))] / 1e3, 1)


print(json.dumps({"rate": rate, "timer_slack_1ns": slack_set, "slots": len(lags), "wakeups": wakeups,
                  "p50_us": q(0.50), "p90_us": q(0.90), "p99_us": q(0.99), "p999_us": q(0.999),
                  "max_us": round(lags[-1] / 1e3, 1)}))

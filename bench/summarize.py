#!/usr/bin/env python3
"""summarize.py - median/min/max per (test, server) from bench/wrk-rounds.sh TSV output files.
Usage: summarize.py results1.tsv [results2.tsv ...]
Columns reported: req/s, p99 ms, server CPU s per run, requests per server-CPU-second,
server kernel share (sys/(user+sys)), wrk CPU fraction, server-CPU busy %, client-CPU busy %."""
import csv, sys, statistics as st
from collections import defaultdict

rows = defaultdict(list)
for fn in sys.argv[1:]:
    with open(fn) as f:
        for r in csv.DictReader(f, delimiter='\t'):
            rows[(r['test'], r['name'])].append(r)

def mmm(vals, fmt):
    vals = [v for v in vals if v is not None]
    if not vals:
        return 'NA'
    return f"{fmt.format(st.median(vals))} ({fmt.format(min(vals))}-{fmt.format(max(vals))})"

def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None

print("| test | server | n | req/s median (min-max) | p99 ms median (min-max) | req per server-CPU-s | server kernel share | wrk CPU frac | CPU0 busy % | CPU1 busy % |")
print("|---|---|---|---|---|---|---|---|---|---|")
for (test, name), rs in sorted(rows.items(), key=lambda kv: (kv[0][0], -st.median([num(r['rps']) for r in kv[1]]))):
    ks = [num(r['srv_sys_s']) / num(r['srv_cpu_s']) for r in rs if num(r['srv_cpu_s'])]
    print(f"| {test} | {name} | {len(rs)} | {mmm([num(r['rps']) for r in rs], '{:,.0f}')} | "
          f"{mmm([num(r['p99_ms']) for r in rs], '{:.2f}')} | {mmm([num(r['req_per_srv_cpu_s']) for r in rs], '{:,.0f}')} | "
          f"{mmm(ks, '{:.2f}')} | {mmm([num(r['wrk_cpu_frac']) for r in rs], '{:.2f}')} | "
          f"{mmm([num(r['cpuS_busy%']) for r in rs], '{:.0f}')} | {mmm([num(r['cpuC_busy%']) for r in rs], '{:.0f}')} |")

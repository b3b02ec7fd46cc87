#!/usr/bin/env python3
# summarize.py TSV... : medians per (workload, client) of us/req, user/sys us/req, rps; "quiet" = cpu1 busy by others < 0.5 s
import csv, sys, statistics as st, collections
rows = []
for f in sys.argv[1:]:
    for r in csv.DictReader(open(f), delimiter="\t"):
        r["file"] = f.split("/")[-1]; rows.append(r)
g = collections.defaultdict(list)
for r in rows: g[(r["file"], r["client"])].append(r)
print(f"{'file':24s} {'client':28s} {'n':>2s} {'us/req':>7s} {'(min-max)':>14s} {'user':>6s} {'sys':>6s} {'req/s':>8s} {'quiet runs':>10s}")
for (f, c), rs in g.items():
    us = [float(r["us_per_req"]) for r in rs]
    q = sum(1 for r in rs if float(r["cpu1_busy_other_s"]) < 0.5)
    print(f"{f:24s} {c:28s} {len(rs):2d} {st.median(us):7.2f} {min(us):6.2f}-{max(us):6.2f} {st.median(float(r['user_us']) for r in rs):6.2f} {st.median(float(r['sys_us']) for r in rs):6.2f} {st.median(float(r['rps']) for r in rs):8.0f} {q:>10d}")

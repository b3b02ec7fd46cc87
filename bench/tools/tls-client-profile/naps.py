#!/usr/bin/env python3
import json, glob, sys, re
for f in sorted(glob.glob(sys.argv[1])):
    t = open(f).read()
    if "{" not in t: continue
    j = json.JSONDecoder().raw_decode(t, t.index("{"))[0]
    w = j["client"]["workers"][0]; n = j["requests"]; L = j["latency"]["uncorrected"]
    print(f"{f.split('/')[-1]:45s} req={n:7d} naps/req={w.get('naps',0)/n:.4f} ctxsw/req={w['context_switches']/n:.4f} "
          f"cpu_us/req(self-reported)={j['client']['cpu_ns_per_request']/1e3:.2f} lat mean={L['mean_us']:.0f}us p50={L['p50_us']:.0f} p99={L['p99_us']:.0f}")

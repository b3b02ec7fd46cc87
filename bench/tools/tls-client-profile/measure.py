#!/usr/bin/env python3
"""Client CPU per request: each client pinned to CPU 1, interleaved rounds.
Usage: measure.py WORKLOAD(json|close) ROUNDS DURATION CLIENT... ; writes raw/<workload>-<client>-<round>.txt and
appends rows to results-<workload>.tsv"""
import os, sys, subprocess, resource, json, re, time
B = "/tmp/tlsprof/target/bench-bin/twelve"
CA = "/tmp/tlsprof/pki/ca.pem"
URL = "https://localhost:8444/json"
wl, rounds, dur = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
clients = sys.argv[4:]
C = 64

def env(name):
    e = dict(os.environ)
    for o in name.split("-")[1:]:
        if o == "rc": e["TLSPROF_RUSTLS_CACHE"] = "1"
        if o == "spin": e["TLSPROF_SPIN"] = "1"
        if re.fullmatch(r"w\d+", o): e["TLSPROF_WAIT_NR"] = o[1:]
        if re.fullmatch(r"m\d+", o): e["TLSPROF_MIN_WAIT_US"] = o[1:]
    return e

def cmd(name):
    if name.startswith("twelve"):
        b = "/tmp/tlsprof/target-exp/bench-bin/twelve" if "exp" in name.split("-") else B
        c = [b, "bench", "-t1", f"-c{C}", f"-d{dur}s", "--warmup", "0", "--cpus", "1", "--json"]
        opts = name.split("-")[1:]
        c += ["--insecure"] if "insecure" in opts else ["--cacert", CA]
        if "epoll" in opts: c += ["--io", "epoll"]
        if "uring" in opts: c += ["--io", "uring"]
        if "full" in opts: c += ["--no-tls-resume"]
        if "coff" in opts: c += ["--coalesce", "off"]
        for o in opts:
            if re.fullmatch(r"nap\d+us", o): c += ["--coalesce", o[3:]]
        if "tls13" in opts: c += ["--tls-version", "1.3"]
        if wl == "close": c += ["--close"]
        return c + [URL]
    if name == "wrk":
        c = ["wrk", "-t1", f"-c{C}", f"-d{dur}s"]
        if wl == "close": c += ["-H", "Connection: close"]
        return c + [URL]
    raise SystemExit(name)

def requests(name, text):
    if name == "wrk":
        return int(re.search(r"(\d+) requests in", text).group(1))
    return json.JSONDecoder().raw_decode(text, text.index("{"))[0]["requests"]

def cpu_stat():
    out = {}
    for l in open("/proc/stat"):
        if l.startswith("cpu") and l[3] != " ":
            f = l.split(); v = list(map(int, f[1:]))
            out[f[0]] = (sum(v) - v[3] - v[4], sum(v), v)
    return out

tsv = f"/tmp/tlsprof/results-{wl}.tsv"
new = not os.path.exists(tsv)
with open(tsv, "a") as t:
    if new:
        t.write("workload\tclient\tround\trequests\trps\tuser_s\tsys_s\tus_per_req\tuser_us\tsys_us\tcpu1_busy_other_s\tcpu1_softirq_s\tcpu0_busy_frac\tload1\n")
    for r in range(1, rounds + 1):
        for name in clients:
            raw = f"/tmp/tlsprof/raw/{wl}-{name}-{r}.txt"
            load1 = os.getloadavg()[0]
            s0 = cpu_stat(); r0 = resource.getrusage(resource.RUSAGE_CHILDREN); w0 = time.time()
            with open(raw, "w") as f:
                subprocess.run(["timeout", str(dur + 30), "taskset", "-c", "1"] + cmd(name), stdout=f, stderr=subprocess.STDOUT, env=env(name))
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN); s1 = cpu_stat(); w1 = time.time()
            u = r1.ru_utime - r0.ru_utime; s = r1.ru_stime - r0.ru_stime
            hz = os.sysconf("SC_CLK_TCK")
            busy1 = (s1["cpu1"][0] - s0["cpu1"][0]) / hz
            frac0 = (s1["cpu0"][0] - s0["cpu0"][0]) / max(1, s1["cpu0"][1] - s0["cpu0"][1])
            n = requests(name, open(raw).read())
            row = [wl, name, r, n, f"{n/dur:.0f}", f"{u:.3f}", f"{s:.3f}", f"{(u+s)*1e6/n:.2f}",
                   f"{u*1e6/n:.2f}", f"{s*1e6/n:.2f}", f"{busy1-(u+s):.2f}", f"{(s1['cpu1'][2][6]-s0['cpu1'][2][6])/hz:.2f}", f"{frac0:.2f}", f"{load1:.2f}"]
            t.write("\t".join(map(str, row)) + "\n"); t.flush()
            print("\t".join(map(str, row)), flush=True)

#!/usr/bin/env python3
import sys, json, re, glob, os
keys = ["read","write","recvfrom","sendto","recvmsg","sendmsg","readv","writev","epoll_wait","epoll_pwait","epoll_pwait2","epoll_ctl",
        "io_uring_enter","clock_nanosleep","futex","socket","connect","close","getsockopt","setsockopt","shutdown"]
def load(path):
    wl, name = os.path.basename(path)[:-len(".sys.csv")].split("-", 1)
    t = open(path.replace(".sys.csv", ".client.txt")).read()
    if name == "wrk":
        n = int(re.search(r"(\d+) requests in", t).group(1))
    else:
        n = json.JSONDecoder().raw_decode(t, t.index("{"))[0]["requests"]
    sc = {}
    other = 0
    for l in open(path):
        f = l.strip().split(",")
        if len(f) < 3 or not f[0].replace('.','').isdigit(): continue
        ev = f[2]
        if ev.startswith("syscalls:sys_enter_"):
            k = ev[len("syscalls:sys_enter_"):]
            sc[k] = float(f[0])
        else:
            sc[ev] = float(f[0])
    w = {}
    for l in open(path.replace(".sys.csv", ".wakeups.csv")):
        f = l.strip().split(",")
        if len(f) >= 3 and f[0].isdigit(): w[f[2]] = int(f[0])
    ns = {}
    for l in open(path.replace(".sys.csv", ".nstat.txt")):
        f = l.split()
        if len(f) >= 2 and f[1].isdigit(): ns[f[0]] = int(f[1])
    return wl, name, n, sc, w, ns
rows = [load(p) for p in sorted(glob.glob(sys.argv[1] if len(sys.argv) > 1 else "/tmp/tlsprof/counts/*.sys.csv"))]
for wl, name, n, sc, w, ns in rows:
    tot = sum(v for k, v in sc.items() if k not in ("context-switches","cpu-migrations","task-clock"))
    parts = [f"{k}={sc[k]/n:.3f}" for k in keys if sc.get(k, 0) > 0]
    print(f"{wl:5} {name:24} req={n:8d} syscalls/req={tot/n:.3f}  " + " ".join(parts))
    print(f"{'':31} ctxsw/req={sc.get('context-switches',0)/n:.4f} task-clock-us/req={sc.get('task-clock',0)*1e3/n:.2f}"
          f" nginx_wakeups/req={w.get('sched:sched_wakeup',0)/n:.4f} client_wakings/req={w.get('sched:sched_waking',0)/n:.4f}"
          f" IPI(cfs+resched)/req={(w.get('irq_vectors:call_function_single_entry',0)+w.get('irq_vectors:reschedule_entry',0))/n:.4f}"
          f" tcp_segs(both dirs)/req={(ns.get('TcpOutSegs',0))/n:.3f} pureacks/req={ns.get('TcpExtTCPPureAcks',0)/n:.4f} delacks/req={ns.get('TcpExtDelayedACKs',0)/n:.4f}")

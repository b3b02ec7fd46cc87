#!/usr/bin/env python3
# us_per_req.py DATA CLIENT_OUT: inclusive µs per request of key functions (samples x period / requests)
import subprocess, sys, re, json
data, cout = sys.argv[1], sys.argv[2]
t = open(cout).read()
n = int(re.search(r"(\d+) requests in", t).group(1)) if "requests in" in t else json.JSONDecoder().raw_decode(t, t.index("{"))[0]["requests"]
hdr = subprocess.run(["perf","report","-i",data,"--stdio","--sort","dso"],capture_output=True,text=True).stdout
total_period = int(re.search(r"Event count \(approx.\): (\d+)", hdr).group(1))
out = subprocess.run(["perf","report","-i",data,"--children","--sort","sym","--stdio","-g","none"],capture_output=True,text=True).stdout
incl = {}
for l in out.splitlines():
    if "%" not in l or l.startswith("#"): continue
    f = l.split()
    incl.setdefault(f[-1], float(f[0].rstrip('%')))
tot_us = total_period / 1e3 / n  # period in ns
print(f"{data}: requests {n}, profiled CPU {total_period/1e9:.2f} s = {tot_us:.2f} us/req")
groups = [("kernel: send (tcp_sendmsg, incl. loopback softirq into the server's socket)", ["tcp_sendmsg"]),
          ("kernel: recv (tcp_recvmsg)", ["tcp_recvmsg"]),
          ("kernel: epoll_wait", ["do_epoll_wait"]),
          ("kernel: epoll_ctl", ["__x64_sys_epoll_ctl"]),
          ("kernel: io_uring_enter total", ["__do_sys_io_uring_enter"]),
          ("kernel: io_uring task work (recv completions)", ["__io_run_local_work"]),
          ("kernel: clock_nanosleep (naps)", ["__x64_sys_clock_nanosleep"]),
          ("kernel: schedule (sleep/wake)", ["__schedule"]),
          ("kernel: all syscalls", ["entry_SYSCALL_64_after_hwframe"]),
          ("kernel: all softirq", ["handle_softirqs"])]
for name, syms in groups:
    p = sum(incl.get(s, 0) for s in syms)
    print(f"  {name:75s} {p:6.2f}%  {p*tot_us/100:5.2f} us/req")

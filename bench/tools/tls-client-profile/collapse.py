#!/usr/bin/env python3
# collapse.py DATA [anchor]: from perf script, category breakdown by call chain; with anchor, leaf symbols under it.
import subprocess, sys, collections
data = sys.argv[1]; anchor = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] != "-v" else None
p = subprocess.Popen(["perf", "script", "-i", data, "-F", "comm,ip,sym,dso", "--no-inline"], stdout=subprocess.PIPE, text=True, stderr=subprocess.DEVNULL)
samples = []; cur = None
for line in p.stdout:
    if not line.strip():
        if cur is not None: samples.append(cur); cur = None
        continue
    if not line.startswith((" ", "\t")):
        cur = []; continue
    f = line.split(None, 1)
    sym = f[1].rsplit(" (", 1)[0] if len(f) > 1 else "?"
    dso = f[1].rsplit(" (", 1)[1].rstrip(")\n") if len(f) > 1 and " (" in f[1] else "?"
    if cur is not None: cur.append((sym, dso))
if cur: samples.append(cur)
N = len(samples)
OTHER = collections.Counter()
def cat(st):
    if not st: return "unknown (no stack)"
    syms = [s for s, d in st]
    leaf, ldso = st[0]; ldso = ldso.rsplit("/", 1)[-1]
    k = "kernel" in ldso or ldso.startswith("[kernel")
    has = lambda x: any(x == s for s in syms)
    if k:
        if has("__x64_sys_clock_nanosleep"): return "kernel: nap (clock_nanosleep)"
        if has("tcp_sendmsg"): return "kernel: send path (tcp_sendmsg + loopback delivery to server)"
        if has("tcp_recvmsg") or has("sock_recvmsg"): return "kernel: recv path"
        if has("__x64_sys_epoll_ctl"): return "kernel: epoll_ctl"
        if has("do_epoll_wait") or has("io_cqring_wait"):
            return "kernel: wait (epoll_wait / io_uring wait, incl. schedule)"
        if has("__schedule") or has("schedule"): return "kernel: schedule (other)"
        if has("handle_softirqs"): return "kernel: softirq (other)"
        if has("__do_sys_io_uring_enter"): return "kernel: io_uring_enter (other)"
        if has("do_syscall_64"): return "kernel: other syscalls/entry"
        return "kernel: other (irq, timers)"
    if ldso.startswith("libcrypto") : return "user: OpenSSL libcrypto"
    if ldso.startswith("libssl"): return "user: OpenSSL libssl"
    if "ring" in leaf and ("aes" in leaf or "gcm" in leaf or "ghash" in leaf or "aead" in leaf or "chacha" in leaf or "poly" in leaf or "CRYPTO" in leaf): return "user: crypto (ring AES-GCM)"
    if leaf.startswith(("fe_", "fe4_", "ge_", "x25519", "sc_")) or "curve25519" in leaf or "digest::" in leaf or "hkdf" in leaf or "hmac" in leaf: return "user: crypto (ring other: ECDHE/ECDSA/SHA)"
    if "ring" in leaf or "nistz" in leaf or "p256" in leaf or "x25519" in leaf or "fiat" in leaf or "sha" in leaf.lower() or "bn_" in leaf or "ecp_" in leaf: return "user: crypto (ring other: ECDHE/ECDSA/SHA)"
    if "rustls" in leaf or "webpki" in leaf: return "user: rustls"
    if "twelve_tls" in leaf or "tls::TlsIo" in leaf: return "user: twelve TLS layer (session.rs, tls.rs)"
    if leaf in ("malloc","free","cfree@GLIBC_2.2.5","_int_free","_int_malloc","realloc","_int_realloc","malloc_consolidate","__libc_malloc","__libc_free","__libc_calloc","calloc") or "alloc" in leaf and "libc" in ldso: return "user: allocator"
    if "memmove" in leaf or "memcpy" in leaf or "memset" in leaf or "memcmp" in leaf: return "user: libc mem*"
    if ldso.startswith("libc"): return "user: libc other"
    if "vdso" in ldso: return "user: vdso (clock_gettime)"
    if "http_parser" in leaf or "next_answer" in leaf or "twelve_http" in leaf: return "user: HTTP"
    if "hdrhistogram" in leaf or "tally" in leaf.lower(): return "user: stats (hdrhistogram, tally)"
    OTHER[leaf] += 1
    return f"user: other ({ldso})"
if anchor:
    c = collections.Counter(); n = 0
    for st in samples:
        if st and any(s == anchor for s, d in st): c[st[0][0]] += 1; n += 1
    print(f"{anchor}: {n} of {N} samples ({100*n/N:.1f}%)")
    for s, v in c.most_common(25): print(f"  {100*v/N:6.2f}%  {s}")
else:
    c = collections.Counter(cat(st) for st in samples)
    for k, v in sorted(c.items(), key=lambda kv: -kv[1]): print(f"  {100*v/N:6.2f}%  {k}")
    print(f"  ({N} samples)")
    if "-v" in sys.argv:
        for k, v in OTHER.most_common(15): print(f"     other: {100*v/N:5.2f}% {k}")

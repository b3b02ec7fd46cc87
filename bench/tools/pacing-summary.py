#!/usr/bin/env python3
"""bench/tools/pacing-summary.py OUT: the tables of a bench/pacing.sh run (OUT/runs.tsv and the
twelve JSON reports in OUT/raw), medians over the rounds, as markdown on stdout."""
import csv
import glob
import json
import os
import statistics as st
import sys

out = sys.argv[1]
rows = list(csv.DictReader(open(os.path.join(out, "runs.tsv")), delimiter="\t"))


def med(xs):
    xs = [x for x in xs if x is not None]
    return st.median(xs) if xs else None


def runs(section, conns, rate, client):
    return [r for r in rows if (r["section"], r["conns"], r["rate"], r["client"]) == (section, conns, rate, client)]


def rps(r):
    """The req/s the client reported over its own measured window (None: a run left out)."""
    return float(r["reported_rps"]) if answered(r) else None


def answered(r):
    """Responses the client counted; 0 for a run that got none, or an open-model run that
    delivered under half its rate (a stalled server, not the client's cost): its figures per
    request are left out."""
    try:
        n = float(r["responses"])
        if r["section"] == "open" and float(r["reported_rps"] or 0) < 0.5 * float(r["rate"]):
            return 0.0
        return n
    except ValueError:
        return 0.0


def client_us(r):
    return 1e6 * float(r["client_cpu_s"]) / answered(r) if answered(r) else None


def server_us(r):
    return 1e6 * float(r["server_cpu_s"]) / answered(r) if answered(r) else None


def per_req(r, col):
    """A count of the run per response, None where it was not recorded (an older run)."""
    v = r.get(col)
    if v in (None, "") or not answered(r):
        return None
    return float(v) / answered(r)


def client_cs(r):
    """The client's context switches (voluntary and involuntary) per response."""
    if r.get("client_vcs") in (None, "") or not answered(r):
        return None
    return (float(r["client_vcs"]) + float(r["client_ics"])) / answered(r)


def report(r):
    """The twelve JSON report of a run, if it is one."""
    path = os.path.join(out, "raw", f"{r['section']}-c{r['conns']}-r{r['rate']}-{r['client']}-{r['round']}")
    if not r["client"].startswith("twelve"):
        return None
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return None


def paired(section, conns, rate, a, b):
    """Client CPU per request of client a over client b's, round by round (the two ran in the
    same round, minutes apart at most): steadier on a noisy host than a ratio of medians."""
    return [client_us(x) / client_us(y) for x in runs(section, conns, rate, a) for y in runs(section, conns, rate, b)
            if x["round"] == y["round"] and client_us(x) and client_us(y)]


def rounds(xs):
    """A paired ratio's rounds and their median, for the targets' lines."""
    return f"per round {', '.join(f'{x:.3f}' for x in xs)}; median {st.median(xs):.3f}" if xs else "no paired rounds"


def fmt(x, spec=".1f"):
    return "-" if x is None else format(x, spec)


# Other builds of twelve bench (bench/pacing.sh's TWELVE_MORE), run beside twelve for A/B.
more = sorted({r["client"] for r in rows if r["client"].startswith("twelve@")})

print("# Summary (medians over the rounds)\n")
failed = [r for r in rows if not answered(r)]
if failed:
    print("Runs that got no response, or under half the asked rate (left out of every median): "
          + ", ".join(f"{r['section']} -c{r['conns']} {r['rate']} req/s {r['client']} round {r['round']}" for r in failed) + ".\n")
capped = [r for r in rows if r["section"] == "capped"]
if capped:
    print("## nginx capped at 50% of CPU 0: req/s each client measured\n")
    print("| -c | client | req/s | / wrk | / gcannon | client µs CPU/req | client cs/req | server µs CPU/req | server cs/req | server wake-ups/req | server waits/req | throttled periods/s | twelve naps (cause) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for conns in sorted({r["conns"] for r in capped}, key=int):
        base = {c: med([rps(r) for r in runs("capped", conns, "0", c)]) for c in ("wrk", "gcannon")}
        for c in ("wrk", "gcannon", "twelve", "twelve_epoll"):
            rs = runs("capped", conns, "0", c)
            if not rs:
                continue
            v = med([rps(r) for r in rs])
            naps = "-"
            if c.startswith("twelve"):
                docs = [d for d in map(report, rs) if d]
                causes = {d["client"].get("nap_cause") for d in docs}
                naps = f"{fmt(med([d['client'].get('naps', 0) for d in docs]), '.0f')} ({', '.join(str(x) for x in causes)})"
            ratio = lambda b: fmt(v / b, ".3f") if b and v else "-"
            thr = med([float(r["throttled"]) / float(r["wall_s"]) for r in rs if r.get("throttled") not in (None, "")])
            print(f"| {conns} | {c} | {fmt(v, '.0f')} | {ratio(base['wrk'])} | {ratio(base['gcannon'])} | "
                  f"{fmt(med([client_us(r) for r in rs]), '.2f')} | {fmt(med([client_cs(r) for r in rs]), '.3f')} | "
                  f"{fmt(med([server_us(r) for r in rs]), '.2f')} | {fmt(med([per_req(r, 'server_cs') for r in rs]), '.3f')} | "
                  f"{fmt(med([per_req(r, 'server_wakeups') for r in rs]), '.3f')} | {fmt(med([per_req(r, 'server_waits') for r in rs]), '.3f')} | "
                  f"{fmt(thr, '.0f')} | {naps} |")
    print()

bound = [r for r in rows if r["section"] == "bound"]
if bound:
    print("## Client-bound: twelve serve uncapped on CPU 0, -c64, closed model\n")
    print("| client | req/s | client µs CPU/req | / wrk | / gcannon | client cs/req | server µs CPU/req |")
    print("|---|---|---|---|---|---|---|")
    cost = {c: med([client_us(r) for r in runs("bound", "64", "0", c)]) for c in ("wrk", "gcannon", "twelve", *more)}
    for c in ("wrk", "gcannon", "twelve", *more):
        rs = runs("bound", "64", "0", c)
        if not rs:
            continue
        ratio = lambda b: fmt(cost[c] / b, ".3f") if b else "-"
        print(f"| {c} | {fmt(med([rps(r) for r in rs]), '.0f')} | {fmt(cost[c], '.2f')} | {ratio(cost['wrk'])} | {ratio(cost['gcannon'])} | "
              f"{fmt(med([client_cs(r) for r in rs]), '.3f')} | {fmt(med([server_us(r) for r in rs]), '.2f')} |")
    if cost.get("twelve") and cost.get("gcannon"):
        print(f"\ntwelve / gcannon client CPU per request ({rounds(paired('bound', '64', '0', 'twelve', 'gcannon'))})")
    for m in more:
        if cost.get("twelve") and cost.get(m):
            print(f"\ntwelve / {m} client CPU per request: {cost['twelve'] / cost[m]:.3f} ({rounds(paired('bound', '64', '0', 'twelve', m))})")
    print()

opened = [r for r in rows if r["section"] == "open"]
if opened:
    print("## Open model into twelve serve on CPU 0, -c64\n")
    print("| rate | client | achieved req/s | client µs CPU/req | client cs/req | server µs CPU/req | server cs/req | twelve lag p50 µs | lag p99 µs | lag max µs |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    cpu = {}
    for rate in sorted({r["rate"] for r in opened}, key=int):
        for c in ("twelve", "twelve_1ms", "wrk2", "oha", *more):
            rs = runs("open", "64", rate, c)
            if not rs:
                continue
            docs = [d for d in map(report, filter(answered, rs)) if d]
            p99 = med([d["self_check"].get("p99_schedule_lag_us") for d in docs]) if docs else None
            mx = med([d["self_check"].get("max_schedule_lag_us") for d in docs]) if docs else None
            p50 = med([d["latency"].get("queue_wait", {}).get("p50_us") for d in docs]) if docs else None
            cpu[(rate, c)] = med([client_us(r) for r in rs])
            print(f"| {rate} | {c} | {fmt(med([rps(r) for r in rs]), '.0f')} | {fmt(cpu[(rate, c)], '.2f')} | {fmt(med([client_cs(r) for r in rs]), '.3f')} | "
                  f"{fmt(med([server_us(r) for r in rs]), '.2f')} | {fmt(med([per_req(r, 'server_cs') for r in rs]), '.3f')} | {fmt(p50)} | {fmt(p99)} | {fmt(mx)} |")
    probes = {}
    for f in glob.glob(os.path.join(out, "raw", "open-c64-r*-timer-*.json")):
        rate = os.path.basename(f).split("-")[2][1:]
        try:
            probes.setdefault(rate, []).append(json.load(open(f)))
        except (OSError, ValueError):
            pass
    if probes:
        print("\nThe machine's own timer in the same rounds (bench/tools/timer-probe.py: a thread on CPU 1 "
              "with 1 ns of timer slack, sleeps of the gap between requests; lateness in µs, medians "
              "over the rounds):\n")
        print("| rate | sleeps | p50 | p90 | p99 | p99.9 | max |")
        print("|---|---|---|---|---|---|---|")
        for rate in sorted(probes, key=int):
            ps = probes[rate]
            print(f"| {rate} | {fmt(med([p['sleeps'] for p in ps]), '.0f')} | "
                  + " | ".join(fmt(med([p[k] for p in ps])) for k in ("p50_us", "p90_us", "p99_us", "p999_us", "max_us")) + " |")
    stalls = {}
    for f in glob.glob(os.path.join(out, "raw", "open-c64-r*-stall-*.json")):
        name = os.path.basename(f)[: -len(".json")].split("-")
        try:
            stalls[(name[2][1:], name[4])] = json.load(open(f))
        except (OSError, ValueError):
            pass
    if stalls:
        print("\nThe lag no client on CPU 1 could beat, round by round (bench/tools/stall-probe.py after "
              "the round: a thread spinning on the clock for the run's length; each slot of the same "
              "schedule that falls in a gap over 20 µs in which it did not run is late by the rest of "
              "the gap), beside twelve's own schedule lag (default --slack) in that round; µs:\n")
        print("| rate | round | gaps | stalled ms | steal ms | longest gap | floor p99 | floor p99.9 | twelve lag p99 | twelve lag max |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for (rate, rnd) in sorted(stalls, key=lambda k: (int(k[0]), int(k[1]))):
            p = stalls[(rate, rnd)]
            q = p["rates"].get(rate, {})
            own = [d for d in map(report, filter(answered, [r for r in runs("open", "64", rate, "twelve") if str(r["round"]) == rnd])) if d]
            lag99 = own[0]["self_check"].get("p99_schedule_lag_us") if own else None
            lagmax = own[0]["self_check"].get("max_schedule_lag_us") if own else None
            print(f"| {rate} | {rnd} | {p['gaps']} | {fmt(p['stalled_ms'])} | {fmt(p['steal_ms'])} | {fmt(p['longest_gap_us'])} | "
                  f"{fmt(q.get('p99_us'))} | {fmt(q.get('p999_us'))} | {fmt(lag99)} | {fmt(lagmax)} |")
    print("\n## Targets\n")
    print("- schedule lag: twelve's p99 (default --slack) under 100 µs at every rate: "
          + ", ".join(f"{rate}: {fmt(med([d['self_check'].get('p99_schedule_lag_us') for d in map(report, filter(answered, runs('open', '64', rate, 'twelve'))) if d]))} µs"
                      for rate in sorted({r['rate'] for r in opened}, key=int)))
    for rate in sorted({r["rate"] for r in opened}, key=int):
        t, t1, w2, oh = (cpu.get((rate, c)) for c in ("twelve", "twelve_1ms", "wrk2", "oha"))
        if t and oh:
            print(f"- {rate} req/s: twelve (default slack) / oha client CPU per request: {t / oh:.3f} (target at 10k and 40k: <= 1.5; "
                  f"{rounds(paired('open', '64', rate, 'twelve', 'oha'))})")
        if t1 and w2:
            print(f"- {rate} req/s: twelve --slack 1ms / wrk2 client CPU per request: {t1 / w2:.3f} (target: <= 1.0)")
        for m in more:
            b = cpu.get((rate, m))
            if t and b:
                print(f"- {rate} req/s: twelve / {m} client CPU per request: {t / b:.3f} ({rounds(paired('open', '64', rate, 'twelve', m))})"
                      + (f"; {m} / oha: {b / oh:.3f}" if oh else ""))

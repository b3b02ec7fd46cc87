#!/usr/bin/env bash
# bench/h2-client.sh - issue 32's benchmark: `twelve bench --h2c/--h2` against h2load as HTTP/2
# clients, in interleaved rounds (h2load twelve, twelve h2load, ...), client pinned to CPU 1, servers
# to CPU 0 with one worker: `twelve serve` and h2o uncapped (the client is the limit: client
# CPU per request), then h2o capped at CAP% of CPU 0 (the server is the limit: req/s). Cells:
# h2c (prior knowledge) and h2 (TLS, ALPN), `-c CONNS` with `-m`/`--streams` 1, 10 and 100, on
# /plaintext (HttpArena's baseline-h2 and baseline-h2c shape).
#
# Each cell's rounds are pairs: h2load and twelve back to back, the order swapped every round
# (A B, B A, ...), so a drift of the server's speed between rounds (a capped h2o moves by a
# quarter on this VM) falls on both sides of a pair and cancels in its ratio. Each run warms up
# WARMUP seconds in the same process (its connections made and set up) and is measured for
# DURATION seconds; over that window (from launch + WARMUP + 0.1 s to launch + WARMUP + DURATION
# - 0.4 s) the script reads the client's and the server's CPU time from
# /proc/PID/task/*/schedstat and, capped, the cgroup's throttled periods. runs.tsv has one row per
# run; summary.txt per cell the medians, then the median of the per-pair ratios with its
# distribution-free confidence interval (order statistics of the pairs; 95 % from six pairs on),
# and whether the issue's target is met by the whole interval, missed by it, or not resolved.
# Beside req/s, the server's CPU per request, its share of a CPU, the share of the cap's periods
# it was throttled in, and (perf on the server's threads) how often per request the server woke
# a thread (the client, on loopback) and sent an IPI doing so: a client that sleeps between
# answers makes the server pay that wake-up from its own CPU.
#
# Usage: bench/h2-client.sh [OUTDIR]       (default bench/runs/<date>-h2-client)
# Env:   ROUNDS=3 (pairs per cell) DURATION=4 WARMUP=1 (seconds) CONNS=64 STREAMS="1 10 100" CAP=50
#        MODES="uncapped capped" PROTOS="h2c h2" BIN=path/to/twelve (default: build the bench-bin
#        profile)
#        CLIENTS="h2load twelve" (twelve_nonap: twelve bench --coalesce off, which never naps;
#        twelve_nap: --coalesce on, which naps whenever the pacing rule allows)
#        PRIORITY=1 (0: leave CPU weights alone; see below)
#        UA="h2load nghttp2/VERSION" (twelve's user-agent, h2load's by default; empty: none)
#        SERVERS="twelve h2o" (the uncapped servers to run; capped is h2o alone)
#        BIN_B=path/to/twelve (a second build, as the client twelve_b in CLIENTS: an A/B of two
#        builds in the same pairs, e.g. CLIENTS="h2load twelve twelve_b")
# Needs root (the cgroup CPU cap), h2o, nghttp2-client (h2load), openssl, python3.
# Every process it starts is stopped by PID on exit.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/h2o-conf.sh"
OUT=${1:-$ROOT/bench/runs/$(date +%F)-h2-client}
ROUNDS=${ROUNDS:-3}; DURATION=${DURATION:-4}; WARMUP=${WARMUP:-1}; CONNS=${CONNS:-64}
STREAMS=${STREAMS:-1 10 100}; CAP=${CAP:-50}; MODES=${MODES:-uncapped capped}
CLIENTS=${CLIENTS:-h2load twelve}; PROTOS=${PROTOS:-h2c h2}; PRIORITY=${PRIORITY:-1}
SERVERS=${SERVERS:-twelve h2o}; BIN_B=${BIN_B:-}
case " $CLIENTS " in *" twelve_b "*) [ -x "$BIN_B" ] || { echo "h2-client.sh: CLIENTS has twelve_b: BIN_B=${BIN_B:-(unset)} must be a twelve binary" >&2; exit 2; } ;; esac
# twelve sends the user-agent h2load sends ("h2load nghttp2/VERSION"), so that both clients'
# requests are the same fields and cost the server the same to decode; UA= sends none.
UA=${UA-$(h2load --version | head -1)}
# The window the CPU figures are read over, in ms from the client's launch: inside the measured
# part of the run with room at both ends (h2load exits DURATION after its warm-up ends, and the
# readings themselves take a few ms).
WIN_FROM=$((WARMUP * 1000 + 100)); WIN_MS=$((DURATION * 1000 - 500)); PERF_MS=$((WIN_MS - 300))
[ "$PERF_MS" -gt 0 ] || { echo "h2-client.sh: DURATION=$DURATION: at least 1 (whole seconds)" >&2; exit 2; }
# Plain (h2c) and TLS ports of each server.
TW_C=9540; TW_S=9541; HO_C=9550; HO_S=9551
mkdir -p "$OUT/raw"
# A cgroup of this run's own for the cap (see bench/cpu-quota.sh), and one for the clients.
export QUOTA_CGROUP=h2client-$$
if [ -f /sys/fs/cgroup/cpu/cpu.shares ]; then CG_ROOT=/sys/fs/cgroup/cpu; else CG_ROOT=/sys/fs/cgroup; fi
CLIENT_CG=$CG_ROOT/$QUOTA_CGROUP-client; SERVER_CG=$CG_ROOT/$QUOTA_CGROUP-server
# PRIORITY=1: the servers (uncapped in a cgroup of their own, capped in the cap's) and the
# clients get the highest CPU weight, so that other work on the host (a build on CPU 0 or 1)
# takes CPU from none of them: the cap or the client, not the host, is the limit. A no-op on
# a quiet host.
top_weight() { # CGROUP_DIR
  if [ -f "$1/cpu.shares" ]; then echo 262144 > "$1/cpu.shares"; else echo 10000 > "$1/cpu.weight"; fi
}
WRAP=()
if [ "$PRIORITY" = 1 ]; then
  if [ "$CG_ROOT" = /sys/fs/cgroup ]; then
    grep -qw cpu $CG_ROOT/cgroup.subtree_control || echo +cpu > $CG_ROOT/cgroup.subtree_control
  fi
  mkdir -p "$CLIENT_CG" "$SERVER_CG"
  top_weight "$CLIENT_CG"; top_weight "$SERVER_CG"
  # This script too: its readings must come on time while server and client fill both CPUs.
  echo $$ > "$CLIENT_CG/cgroup.procs"
  # shellcheck disable=SC2016  # expanded by the inner shell
  WRAP=(sh -c 'echo $$ > "$0"; exec "$@"' "$CLIENT_CG/cgroup.procs")
fi
# Server wake-ups of the client and IPIs per request, counted by perf on the server's threads
# when perf and the tracepoints are there.
EVENTS=
if perf stat -e sched:sched_wakeup,ipi:ipi_send_cpu -- true > /dev/null 2>&1; then
  EVENTS=sched:sched_wakeup,ipi:ipi_send_cpu
fi
if [ -z "${BIN:-}" ]; then
  (cd "$ROOT" && RUSTFLAGS="-C target-cpu=native" cargo build -q --profile bench-bin)
  BIN="${CARGO_TARGET_DIR:-$ROOT/target}/bench-bin/twelve"
fi

DIR=$(mktemp -d /tmp/twelve-h2-client.XXXXXX)
"$ROOT/bench/tls-pki.sh" "$DIR" > /dev/null
mkdir -p "$DIR/h2o"

PIDS=()
stop_all() {
  "$ROOT/bench/cpu-quota.sh" off $HO_C $HO_S >/dev/null 2>&1 || true
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
  if [ -d "$CLIENT_CG" ]; then echo $$ > "$CG_ROOT/cgroup.procs"; fi
  for cg in "$CLIENT_CG" "$SERVER_CG"; do [ ! -d "$cg" ] || rmdir "$cg" 2>/dev/null || true; done
  rm -rf "$DIR"
}
trap stop_all EXIT
ulimit -n "$(ulimit -Hn)"

taskset -c 0 "$BIN" serve --cpus 0 --workers 1 \
  --tls-cert "$DIR/chain.pem" --tls-key "$DIR/key.pem" \
  --tls-listen "127.0.0.1:$TW_S" --h2c-listen "127.0.0.1:$TW_C" --listen 127.0.0.1:0 \
  > "$OUT/raw/twelve-serve.log" 2>&1 &
PIDS+=($!)

# h2o: one thread (bench/h2o-conf.sh).
write_h2o_conf "$DIR" "$HO_C" "$HO_S"
taskset -c 0 h2o -c "$DIR/h2o/h2o.conf" > "$OUT/raw/h2o.log" 2>&1 &
PIDS+=($!)

for p in $TW_C $HO_C; do
  for _ in $(seq 50); do
    curl -sf --http2-prior-knowledge "http://127.0.0.1:$p/plaintext" >/dev/null && break
    sleep 0.2
  done
done

{
  echo "# twelve bench --h2/--h2c against h2load (issue 32)"
  echo
  echo "- date: $(date -u +%FT%TZ)"
  echo "- twelve: $("$BIN" --version | head -1)"
  [ -z "$BIN_B" ] || echo "- twelve_b: $("$BIN_B" --version | head -1) ($BIN_B)"
  echo "- commit: $(cd "$ROOT" && git rev-parse --short=12 HEAD)"
  echo "- kernel: $(uname -r)"
  echo "- cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) online"
  echo "- h2o: $(h2o --version | head -1); h2load: $(h2load --version | head -1)"
  echo "- servers: one worker each, pinned to CPU 0; capped mode: h2o at $CAP% of CPU 0"
  echo "- clients: -t1 on CPU 1, -c$CONNS, ${DURATION}s measured after a ${WARMUP}s warm-up in the same run;"
  echo "  rounds are pairs (the order swapped every round); CPU read over each run's measured window"
  echo "- twelve's user-agent: ${UA:-none} (h2load's own: $(h2load --version | head -1))"
  echo "- CPU weights: PRIORITY=$PRIORITY (1: capped server and clients in cgroups of the highest weight);" \
    "perf counts: ${EVENTS:-none (perf or its tracepoints missing)}"
  echo "- command: \`bench/h2-client.sh\` (ROUNDS=$ROUNDS DURATION=$DURATION CONNS=$CONNS STREAMS=\"$STREAMS\" CAP=$CAP MODES=\"$MODES\" CLIENTS=\"$CLIENTS\" SERVERS=\"$SERVERS\" PROTOS=\"$PROTOS\" WARMUP=$WARMUP PRIORITY=$PRIORITY)"
} > "$OUT/README.md"

. "$ROOT/bench/ticks.sh"

# Time on CPU, in ns, of every thread of the given PIDs (schedstat's first field).
cpu_ns() {
  local t=0 p ns
  for p in "$@"; do
    for ns in $(cut -d' ' -f1 /proc/"$p"/task/*/schedstat 2>/dev/null); do t=$((t + ns)); done
  done
  echo "$t"
}
# "throttled periods" of this run's cgroup so far (cgroup v1 or v2), "0 0" without the cap.
periods() {
  local f
  for f in "/sys/fs/cgroup/cpu/$QUOTA_CGROUP/cpu.stat" "/sys/fs/cgroup/$QUOTA_CGROUP/cpu.stat"; do
    if [ -f "$f" ]; then
      awk '/^nr_periods /{p=$2} /^nr_throttled /{t=$2} END{print t+0, p+0}' "$f"
      return
    fi
  done
  echo "0 0"
}
secs() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }
sleep_until() { # NS (date +%s%N)
  local ms=$((($1 - $(date +%s%N)) / 1000000))
  [ "$ms" -le 0 ] || sleep "$(secs "$ms")"
}
# The client itself under its launchers (taskset, timeout): the first of PID's line of
# descendants named NAME.
client_pid() { # PID NAME
  local p=$1 c _
  for _ in $(seq 100); do
    if [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$2" ]; then echo "$p"; return; fi
    c=$(pgrep -P "$p" | head -1) || true
    if [ -n "$c" ]; then p=$c; else sleep 0.01; fi
  done
}
# Runs a client (CMD, stdout to FILE, stderr to FILE.err) in the background under bash `time`
# (FILE.time: its user, system and real seconds) and reads, over its measured window, its own
# CPU time, the server's (SRV_PIDS) and the cap's periods: FILE.win has "client_ns server_ns
# throttled periods window_ms"; FILE.perf has perf's counts on the server over PERF_MS of it.
measure() { # FILE NAME CMD...
  local f=$1 name=$2 sub cp c0 c1 s0 s1 t0 t1 p0 p1 l0 w0 w1 pp=
  shift 2
  (
    TIMEFORMAT='%U %S %R'
    time "${WRAP[@]}" "$@" > "$f" 2> "$f.err"
  ) 2> "$f.time" &
  sub=$!
  # Deadlines from the launch, so that the readings' own time does not push the window late.
  l0=$(date +%s%N)
  sleep_until $((l0 + WIN_FROM * 1000000))
  cp=$(client_pid "$sub" "$name")
  if [ -n "$EVENTS" ]; then
    # perf takes a while to attach: its shorter window still ends inside this one.
    perf stat -x, -e "$EVENTS" -p "$(echo $SRV_PIDS | tr ' ' ,)" -- sleep "$(secs "$PERF_MS")" \
      2> "$f.perf" &
    pp=$!
  fi
  read -r t0 p0 < <(periods)
  # shellcheck disable=SC2086
  w0=$(date +%s%N) c0=$(cpu_ns $cp) s0=$(cpu_ns $SRV_PIDS)
  sleep_until $((l0 + (WIN_FROM + WIN_MS) * 1000000))
  # shellcheck disable=SC2086
  c1=$(cpu_ns $cp) s1=$(cpu_ns $SRV_PIDS) w1=$(date +%s%N)
  read -r t1 p1 < <(periods)
  [ -z "$pp" ] || wait "$pp" || true
  wait "$sub" || true
  echo "$((c1 - c0)) $((s1 - s0)) $((t1 - t0)) $((p1 - p0)) $(((w1 - w0) / 1000000))" > "$f.win"
}
# perf's count of EVENT per request in FILE.perf, the run having made REQUESTS in DURATION; NA
# without it.
perf_per_req() { # FILE EVENT REQUESTS
  awk -F, -v e="$2" -v q="$(awk -v n="$3" -v d="$DURATION" -v w="$PERF_MS" 'BEGIN{print n / d * w / 1000}')" \
    '$3 == e && $1 ~ /^[0-9]+$/ {printf "%.3f", $1 / q; found = 1} END {if (!found) printf "NA"}' \
    "$1.perf" 2>/dev/null || printf NA
}

# Each prints the requests of its measured window.
run_h2load() { # URL STREAMS FILE
  measure "$3" h2load taskset -c 1 h2load -t1 -c"$CONNS" -m"$2" --warm-up-time="$WARMUP" \
    -D"$DURATION" "$1"
  awk -F'[ ,]+' '/^requests:/{print $8}' "$3"
}
run_twelve_nonap() { EXTRA="--coalesce off" run_twelve "$@"; }
run_twelve_nap() { EXTRA="--coalesce on" run_twelve "$@"; }
run_twelve_b() { BIN=$BIN_B run_twelve "$@"; }
run_twelve() { # URL STREAMS FILE
  local proto="--h2c ${EXTRA:-}" ua=()
  case $1 in https://*) proto="--h2 --cacert $DIR/ca.pem ${EXTRA:-}" ;; esac
  [ -z "$UA" ] || ua=(-H "user-agent: $UA")
  # shellcheck disable=SC2086
  measure "$3" "$(basename "$BIN" | cut -c1-15)" timeout 60 "$BIN" bench $proto --streams "$2" \
    --cpus 1 -t1 -c"$CONNS" -d"${DURATION}s" --warmup "${WARMUP}s" --timeout 5s "${ua[@]}" "$1" --json
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["requests"])' "$3" 2>/dev/null || echo 0
}

TSV="$OUT/runs.tsv"
printf '%s\t' mode proto streams server client round requests rps user_s sys_s cpu_us_per_req \
  srv_cpu_us_per_req srv_cpu_pct throttled slot srv_wakeups_per_req srv_ipis_per_req > "$TSV"
echo window_ms >> "$TSV"
read -ra ORDER <<< "$CLIENTS"
for mode in $MODES; do
  servers=
  for s in $SERVERS; do
    case $s in
      twelve) servers+=" twelve=$TW_C:$TW_S" ;;
      h2o) servers+=" h2o=$HO_C:$HO_S" ;;
      *) echo "h2-client.sh: SERVERS=$SERVERS: each of twelve, h2o" >&2; exit 2 ;;
    esac
  done
  if [ "$PRIORITY" = 1 ]; then
    for p in $(pids_on $TW_C) $(pids_on $HO_C); do echo "$p" > "$SERVER_CG/cgroup.procs"; done
  fi
  if [ "$mode" = capped ]; then
    servers="h2o=$HO_C:$HO_S"
    "$ROOT/bench/cpu-quota.sh" "$CAP" $HO_C $HO_S > "$OUT/raw/quota.log"
    if [ "$PRIORITY" = 1 ]; then top_weight "$CG_ROOT/$QUOTA_CGROUP"; fi
  fi
  for proto in $PROTOS; do
    for m in $STREAMS; do
      for s in $servers; do
        name=${s%%=*}; ports=${s##*=}
        SRV_PIDS=$(pids_on "${ports%%:*}")
        if [ "$proto" = h2c ]; then url="http://127.0.0.1:${ports%%:*}/plaintext"
        else url="https://127.0.0.1:${ports##*:}/plaintext"; fi
        for ((r = 1; r <= ROUNDS; r++)); do
          # A B in odd rounds, B A in even ones: a steady drift weighs on both clients alike.
          clients=("${ORDER[@]}")
          if ((r % 2 == 0)); then
            clients=(); for ((k = ${#ORDER[@]} - 1; k >= 0; k--)); do clients+=("${ORDER[k]}"); done
          fi
          slot=0
          for client in "${clients[@]}"; do
            slot=$((slot + 1))
            f="$OUT/raw/$mode-$proto-m$m-$name-$client-$r.out"
            n=$(run_$client "$url" "$m" "$f")
            read -r u sy _ < "$f.time"
            read -r cns sns thr per w < "$f.win"
            wk=$(perf_per_req "$f" sched:sched_wakeup "${n:-0}")
            ipi=$(perf_per_req "$f" ipi:ipi_send_cpu "${n:-0}")
            # Figures per request over the window, whose requests are the run's rate times its length; a
            # client gone before the window's end (a failed run) has no CPU figure (NA).
            awk -v a="$mode" -v p="$proto" -v m="$m" -v s="$name" -v c="$client" -v r="$r" \
              -v n="${n:-0}" -v d="$DURATION" -v u="$u" -v sy="$sy" -v w="$w" \
              -v cns="$cns" -v sns="$sns" -v thr="$thr" -v per="$per" -v slot="$slot" \
              -v wk="$wk" -v ipi="$ipi" \
              'function per_req(ns) { return (q > 0 && ns > 0) ? sprintf("%.3f", ns / 1000 / q) : "NA" }
              BEGIN{q = n / d * w / 1000
                printf "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%.0f\t%s\t%s\t%s\t%s\t%.1f\t%s\t%d\t%s\t%s\t%d\n",
                  a, p, m, s, c, r, n, n / d, u, sy, per_req(cns), per_req(sns), sns / (w * 1e4),
                  (per > 0 ? sprintf("%.3f", thr / per) : "NA"), slot, wk, ipi, w}' \
              >> "$TSV"
          done
        done
      done
    done
  done
  if [ "$mode" = capped ]; then "$ROOT/bench/cpu-quota.sh" off $HO_C $HO_S >> "$OUT/raw/quota.log"; fi
done

# Per cell: medians, and twelve's ratio to h2load (CPU per request uncapped, req/s capped) as the
# median of the per-pair ratios with its confidence interval. The targets (issue 32): client
# CPU per request at most 0.7 x h2load's (uncapped), req/s within 2 % of h2load's (capped).
python3 - "$TSV" > "$OUT/summary.txt" <<'PY'
import csv, math, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
cells = {}
for r in rows:
    key = (r["mode"], r["proto"], r["streams"], r["server"])
    cells.setdefault(key, {}).setdefault(r["client"], {})[r["round"]] = r


def interval(xs):
    """The median of xs and a distribution-free interval for it: the k-th smallest and largest
    with k the largest whose binomial tail leaves at least 95 % inside (the extremes below six
    values, when no k does), and that interval's confidence level."""
    xs, n = sorted(xs), len(xs)
    if not n:
        return 0, 0, 0, 0
    tail = lambda k: sum(math.comb(n, i) for i in range(k)) / 2**n
    k = max([k for k in range(1, n // 2 + 1) if tail(k) <= 0.025] or [1])
    return statistics.median(xs), xs[k - 1], xs[n - k], 1 - 2 * tail(k)


def verdict(lo, hi, conf, ok_lo, ok_hi):
    """Met when the whole interval is inside the target, missed when all of it is outside,
    neither from fewer than five pairs (an interval under 90 %)."""
    if conf < 0.9:
        return "few-pairs"
    if ok_lo <= lo and hi <= ok_hi:
        return "met"
    if hi < ok_lo or lo > ok_hi:
        return "missed"
    return "unresolved"


cols = ("mode proto streams server client h2load_cpu_us client_cpu_us cpu_ratio h2load_rps "
        "client_rps rps_ratio pairs confidence pair_cpu_ratio cpu_lo cpu_hi pair_rps_ratio rps_lo "
        "rps_hi h2load_srv_us client_srv_us pair_srv_ratio srv_lo srv_hi h2load_srv_pct "
        "client_srv_pct h2load_throttled client_throttled target")
print("\t".join(cols.split()))
for (mode, proto, m, srv), by in cells.items():
    h = by.get("h2load", {})
    def med(runs, k):
        xs = [float(x[k]) for x in runs.values() if x[k] != "NA"]
        return statistics.median(xs) if xs else float("nan")
    for c in sorted(k for k in by if k != "h2load"):
        t = by[c]
        pairs = [(h[r], t[r]) for r in h if r in t and float(h[r]["rps"]) > 0 and float(t[r]["rps"]) > 0]
        ratio = lambda k: [float(b[k]) / float(a[k]) for a, b in pairs
                           if "NA" not in (a[k], b[k]) and float(a[k]) > 0]
        cm, clo, chi, cconf = interval(ratio("cpu_us_per_req"))
        rm, rlo, rhi, conf = interval(ratio("rps"))
        sm, slo, shi, _ = interval(ratio("srv_cpu_us_per_req"))
        hc, tc, hr, tr = med(h, "cpu_us_per_req"), med(t, "cpu_us_per_req"), med(h, "rps"), med(t, "rps")
        if mode == "capped":
            target = "rps-" + verdict(rlo, rhi, conf, 0.98, 1.02)
        else:
            target = "cpu-" + verdict(clo, chi, cconf, 0, 0.7)
        f = lambda x, d=3: "NA" if x != x else f"{x:.{d}f}"
        print("\t".join([mode, proto, m, srv, c, f(hc), f(tc), f(tc / hc if hc else 0), f(hr, 0), f(tr, 0),
                         f(tr / hr if hr else 0), str(len(pairs)), f(conf, 2), f(cm), f(clo), f(chi),
                         f(rm), f(rlo), f(rhi), f(med(h, "srv_cpu_us_per_req")),
                         f(med(t, "srv_cpu_us_per_req")), f(sm), f(slo), f(shi),
                         f(med(h, "srv_cpu_pct"), 1), f(med(t, "srv_cpu_pct"), 1),
                         f(med(h, "throttled")), f(med(t, "throttled")), target]))
PY
cat "$OUT/summary.txt"

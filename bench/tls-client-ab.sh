#!/usr/bin/env bash
# bench/tls-client-ab.sh - one `twelve bench` build against another as TLS clients, with h2load
# and wrk beside them, against one uncapped nginx (bench/nginx-tls.conf, one worker) on CPU 0:
# what a change to the load generator did to its CPU per request over TLS. Each client runs on
# CPU 1 with one thread, -c CONNS; rounds interleave A B h2load wrk, then B A wrk h2load, ...;
# medians quoted. The TLS counterpart of bench/client-ab.sh.
#
# Usage: bench/tls-client-ab.sh A_BIN B_BIN [OUTDIR]   (default bench/runs/<date>-tls-client-ab)
# Env:   ROUNDS=5  DURATION=6  CONNS=64  CLOSE_N=10000  PEERS="h2load wrk"
#        MODE=close-noverify (a new connection per request, no resumption, no chain
#        verification: what wrk and h2load do), close (twelve resumes, --cacert), json
#        (keep-alive)
# h2load's timed mode does not reopen closed connections, so a close MODE runs it by count
# (CLOSE_N requests). Writes OUTDIR/README.md, runs.tsv and summary.md; raw/ keeps every
# client's output (standard error apart, in .err). Needs nginx, openssl, h2load, wrk,
# python3. Stops what it starts, by PID.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
A=${1:?usage: tls-client-ab.sh A_BIN B_BIN [OUTDIR]}; B=${2:?usage: tls-client-ab.sh A_BIN B_BIN [OUTDIR]}
OUT=${3:-$ROOT/bench/runs/$(date +%F)-tls-client-ab}
ROUNDS=${ROUNDS:-5}; DURATION=${DURATION:-6}; CONNS=${CONNS:-64}; CLOSE_N=${CLOSE_N:-10000}
MODE=${MODE:-close-noverify}; read -r -a PEERS <<< "${PEERS:-h2load wrk}"
PORT=8444
mkdir -p "$OUT/raw"
. "$ROOT/bench/tls-nginx.sh"
start_tls_nginx "$ROOT" "$PORT"
URL="https://localhost:$PORT/json"
H2=(-D"$DURATION")
case $MODE in
  close-noverify) TW=(--close --insecure --no-tls-resume); HDR=(-H 'Connection: close'); H2=(-n"$CLOSE_N") ;;
  close) TW=(--close --cacert "$PKI/ca.pem"); HDR=(-H 'Connection: close'); H2=(-n"$CLOSE_N") ;;
  json) TW=(--cacert "$PKI/ca.pem"); HDR=() ;;
  *) echo "tls-client-ab.sh: MODE is close-noverify, close or json, not $MODE" >&2; exit 2 ;;
esac
{
  echo "# twelve bench A against B as TLS clients of uncapped nginx ($MODE)"
  echo
  echo "- date: $(date -u +%FT%TZ); kernel $(uname -r); $(nproc) CPUs"
  echo "- A: \`$A\`: $("$A" --version | head -1)"
  echo "- B: \`$B\`: $("$B" --version | head -1)"
  echo "- nginx: $(nginx -V 2>&1 | head -1), $(nginx -V 2>&1 | grep -m1 'OpenSSL')"
  echo "- peers: ${PEERS[*]}; h2load $(h2load --version | head -1 | awk '{print $NF}')"
  echo "- command: \`ROUNDS=$ROUNDS DURATION=$DURATION CONNS=$CONNS MODE=$MODE bench/tls-client-ab.sh A B\`"
  echo "- twelve: \`taskset -c 1 BIN bench -t1 -c$CONNS -d${DURATION}s --warmup 0 --cpus 1 --json ${TW[*]} $URL\`"
  echo "- client CPU is user+sys of the client process; nginx uncapped on CPU 0, one worker"
} > "$OUT/README.md"
echo -e "round\tclient\trequests\tcpu_s\tus_per_req" > "$OUT/runs.tsv"
for ((r = 1; r <= ROUNDS; r++)); do
  order=(A B "${PEERS[@]}")
  [ $((r % 2)) = 0 ] && order=(B A $(printf '%s\n' "${PEERS[@]}" | tac))
  for c in "${order[@]}"; do
    case $c in
      A | B) bin=$A; [ "$c" = B ] && bin=$B
        cmd=("$bin" bench -t1 -c"$CONNS" -d"${DURATION}s" --warmup 0 --cpus 1 --json "${TW[@]}" "$URL") ;;
      h2load) cmd=(h2load --h1 -t1 -c"$CONNS" "${H2[@]}" "${HDR[@]}" "$URL") ;;
      wrk) cmd=(wrk -t1 -c"$CONNS" -d"${DURATION}s" "${HDR[@]}" "$URL") ;;
      *) echo "tls-client-ab.sh: unknown peer $c" >&2; exit 2 ;;
    esac
    python3 -c 'import os,sys,subprocess,json,re
raw, r, c = sys.argv[1:4]
p = subprocess.run(sys.argv[4:], capture_output=True, text=True)
open(raw, "w").write(p.stdout)
open(raw + ".err", "w").write(p.stderr)
t = p.stdout
if c == "wrk": n = int(re.search(r"(\d+) requests in", t).group(1))
elif c == "h2load": n = int(re.search(r"^requests: .* (\d+) succeeded", t, re.M).group(1))
else: n = json.JSONDecoder().raw_decode(t, t.index("{"))[0]["requests"]
u = os.times(); cpu = u.children_user + u.children_system
print(f"{r}\t{c}\t{n}\t{cpu:.3f}\t{cpu * 1e6 / n:.2f}")' \
      "$OUT/raw/$r-$c.txt" "$r" "$c" taskset -c 1 "${cmd[@]}" >> "$OUT/runs.tsv"
  done
done
python3 - "$OUT/runs.tsv" "${PEERS[@]}" > "$OUT/summary.md" <<'PY'
import csv, statistics as st, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter='\t'))
peers = sys.argv[2:]
med = lambda c: st.median(float(r['us_per_req']) for r in rows if r['client'] == c)
print("| client | CPU µs per request (median) | A / this | B / this |")
print("|---|---|---|---|")
for c in ['A', 'B'] + peers:
    print(f"| {c} | {med(c):.1f} | {med('A') / med(c):.3f} | {med('B') / med(c):.3f} |")
print(f"\nB/A: client CPU per request {med('B') / med('A'):.3f}")
PY
cat "$OUT/summary.md"

#!/usr/bin/env bash
# bench/tools/tls-provider-ab.sh OLD NEW [ROUNDS] - two twelve binaries as TLS clients, and wrk beside them, against one
# uncapped nginx (bench/nginx-tls.conf, one worker) on CPU 0; each client on CPU 1, -c64, 6 s,
# interleaved (OLD NEW wrk OLD NEW wrk ...); one row per run: its CPU per request.
# MODE=close-noverify (default: a new connection per request, no resumption, no chain
# verification: what wrk does), close (resumption on, --cacert), json (keep-alive).
# Stops what it starts by PID. Made for bench/runs/2026-11-26-aws-lc; bench/tls-client-ab.sh is its
# general form, with h2load beside wrk.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OLD=$1; NEW=$2; ROUNDS=${3:-5}; PORT=8444; MODE=${MODE:-close-noverify}
. "$ROOT/bench/tls-nginx.sh"
start_tls_nginx "$ROOT" "$PORT"
URL="https://localhost:$PORT/json"
case $MODE in
  close-noverify) TW=(--close --insecure --no-tls-resume); WRK=(-H 'Connection: close') ;;
  close) TW=(--close --cacert "$PKI/ca.pem"); WRK=(-H 'Connection: close') ;;
  json) TW=(--cacert "$PKI/ca.pem"); WRK=() ;;
esac
echo -e "round\tclient\trequests\tcpu_s\tus_per_req"
for r in $(seq "$ROUNDS"); do
  for c in old new wrk; do
    case $c in
      old) cmd=("$OLD" bench -t1 -c64 -d6s --warmup 0 --cpus 1 --json "${TW[@]}" "$URL") ;;
      new) cmd=("$NEW" bench -t1 -c64 -d6s --warmup 0 --cpus 1 --json "${TW[@]}" "$URL") ;;
      wrk) cmd=(wrk -t1 -c64 -d6s "${WRK[@]}" "$URL") ;;
    esac
    python3 -c 'import os,sys,subprocess,json,re
p=subprocess.run(sys.argv[3:],capture_output=True,text=True)
t=p.stdout
if sys.argv[2]=="wrk": n=int(re.search(r"(\d+) requests in",t).group(1))
else: n=json.JSONDecoder().raw_decode(t, t.index("{"))[0]["requests"]
u=os.times(); cpu=u.children_user+u.children_system
print(f"{sys.argv[1]}\t{sys.argv[2]}\t{n}\t{cpu:.3f}\t{cpu*1e6/n:.2f}")' \
      "$r" "$c" taskset -c 1 "${cmd[@]}"
  done
done

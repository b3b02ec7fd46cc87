#!/usr/bin/env bash
# bench/tools/tls-store-ab.sh OLD NEW [ROUNDS] - twelve bench's client CPU per request, connection per request over TLS
# (--close, resumption on, -c64, 6 s) against one server on CPU 0, uncapped: nginx
# (bench/nginx-tls.conf, one worker) or, with SERVER=twelve, NEW's `twelve serve --tls-cert`
# (one worker). Two twelve binaries as the client, interleaved (OLD NEW OLD NEW ...) on CPU 1;
# one row per run. Stops what it starts by PID. Made for bench/runs/2026-11-26-tls-tickets.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OLD=$1; NEW=$2; ROUNDS=${3:-5}; PORT=8444
PKI=$(mktemp -d /tmp/twelve-tls-ab.XXXXXX)
"$ROOT/bench/tls-pki.sh" "$PKI"
sed -e "s|@DIR@|$PKI|g" -e "s|@CERT@|$PKI/chain.pem|" -e "s|@KEY@|$PKI/key.pem|" \
  -e "s|@PORT@|$PORT|" "$ROOT/bench/nginx-tls.conf" > "$PKI/nginx.conf"
ulimit -n "$(ulimit -Hn)"
if [ "${SERVER:-nginx}" = twelve ]; then
  taskset -c 0 "$NEW" serve --listen "127.0.0.1:$PORT" --cpus 0 \
    --tls-cert "$PKI/chain.pem" --tls-key "$PKI/key.pem" > "$PKI/serve.log" 2>&1 &
else
  taskset -c 0 nginx -p "$PKI" -e "$PKI/error.log" -c "$PKI/nginx.conf" &
fi
NGINX=$!
trap 'kill $NGINX 2>/dev/null; wait $NGINX 2>/dev/null; rm -rf "$PKI"' EXIT
for _ in $(seq 50); do curl -sfk "https://127.0.0.1:$PORT/json" >/dev/null && break; sleep 0.2; done
echo -e "round\tbinary\trequests\tcpu_s\tus_per_req"
for r in $(seq "$ROUNDS"); do
  for b in old new; do
    bin=$OLD; [ "$b" = new ] && bin=$NEW
    python3 -c 'import os,sys,subprocess,json
p=subprocess.run(sys.argv[3:],capture_output=True,text=True)
t=p.stdout; d=json.JSONDecoder().raw_decode(t, t.index("{"))[0]
u=os.times(); cpu=u.children_user+u.children_system; n=d["requests"]
print(f"{sys.argv[1]}\t{sys.argv[2]}\t{n}\t{cpu:.3f}\t{cpu*1e6/n:.2f}")' \
      "$r" "$b" taskset -c 1 "$bin" bench -t1 -c64 -d6s --warmup 0 --cpus 1 --json --close \
      --cacert "$PKI/ca.pem" "https://localhost:$PORT/json"
  done
done

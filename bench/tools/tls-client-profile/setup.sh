#!/usr/bin/env bash
# Makes the CA + ECDSA P-256 leaf (bench/tls-pki.sh, as bench/tls.sh does) and starts nginx (1 worker) pinned to CPU 0 on :8444.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
PKI=/tmp/tlsprof/pki
mkdir -p "$PKI" && cd "$PKI"
"$HERE/../../tls-pki.sh" "$PKI"
sed -e "s|@DIR@|$PKI|g" -e "s|@CERT@|$PKI/chain.pem|" -e "s|@KEY@|$PKI/key.pem|" \
  -e "s|@PORT@|8444|" "$HERE/../../nginx-tls.conf" > "$PKI/nginx.conf"
ulimit -n "$(ulimit -Hn)"
taskset -c 0 nginx -p "$PKI" -e "$PKI/error.log" -c "$PKI/nginx.conf" > $PKI/nginx.out 2>&1 &
echo $! > $PKI/nginx.master.pid
for _ in $(seq 50); do curl -sf --cacert $PKI/ca.pem "https://localhost:8444/json" >/dev/null && break; sleep 0.2; done
curl -s --cacert $PKI/ca.pem https://localhost:8444/json; echo

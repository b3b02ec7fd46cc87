#!/usr/bin/env bash
# Makes the CA + ECDSA P-256 leaf (as bench/tls.sh) and starts nginx (1 worker) pinned to CPU 0 on :8444.
set -euo pipefail
PKI=/tmp/tlsprof/pki
cd $PKI
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 7 \
  -subj /CN=bench-ca -keyout "$PKI/ca.key" -out "$PKI/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost \
  -keyout "$PKI/key.pem" -out "$PKI/leaf.csr" 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' > "$PKI/ext"
openssl x509 -req -in "$PKI/leaf.csr" -CA "$PKI/ca.pem" -CAkey "$PKI/ca.key" -CAcreateserial \
  -days 7 -extfile "$PKI/ext" -out "$PKI/leaf.pem" 2>/dev/null
cat "$PKI/leaf.pem" "$PKI/ca.pem" > "$PKI/chain.pem"
sed -e "s|@DIR@|$PKI|g" -e "s|@CERT@|$PKI/chain.pem|" -e "s|@KEY@|$PKI/key.pem|" \
  -e "s|@PORT@|8444|" /work/main/bench/nginx-tls.conf > "$PKI/nginx.conf"
ulimit -n "$(ulimit -Hn)"
taskset -c 0 nginx -p "$PKI" -e "$PKI/error.log" -c "$PKI/nginx.conf" > $PKI/nginx.out 2>&1 &
echo $! > $PKI/nginx.master.pid
for _ in $(seq 50); do curl -sf --cacert $PKI/ca.pem "https://localhost:8444/json" >/dev/null && break; sleep 0.2; done
curl -s --cacert $PKI/ca.pem https://localhost:8444/json; echo

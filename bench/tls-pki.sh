#!/usr/bin/env bash
# bench/tls-pki.sh DIR - a CA and an ECDSA P-256 leaf for localhost and 127.0.0.1 (the key type
# most TLS edges serve), valid 7 days, into DIR: ca.pem, key.pem (the leaf's key), leaf.pem and
# chain.pem (leaf then CA), for the TLS benchmarks (bench/tls.sh and the A/B scripts of
# bench/runs/). Needs openssl.
set -euo pipefail
PKI=$1
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 7 \
  -subj /CN=bench-ca -keyout "$PKI/ca.key" -out "$PKI/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost \
  -keyout "$PKI/key.pem" -out "$PKI/leaf.csr" 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' > "$PKI/ext"
openssl x509 -req -in "$PKI/leaf.csr" -CA "$PKI/ca.pem" -CAkey "$PKI/ca.key" -CAcreateserial \
  -days 7 -extfile "$PKI/ext" -out "$PKI/leaf.pem" 2>/dev/null
cat "$PKI/leaf.pem" "$PKI/ca.pem" > "$PKI/chain.pem"

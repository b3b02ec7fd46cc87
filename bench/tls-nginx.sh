# bench/tls-nginx.sh - sourced by the TLS A/B scripts: start_tls_nginx ROOT PORT makes a CA and
# an ECDSA P-256 leaf for localhost (bench/tls-pki.sh) in a fresh PKI directory, starts
# Debian's nginx with bench/nginx-tls.conf on PORT, pinned to CPU 0, and waits until it
# answers. It sets PKI (the directory) and NGINX (nginx's PID), and an EXIT trap that stops
# that nginx, by PID, and removes the directory. It raises the open-file limit to the hard one.
start_tls_nginx() {
  local root=$1 port=$2
  PKI=$(mktemp -d /tmp/twelve-tls-ab.XXXXXX)
  "$root/bench/tls-pki.sh" "$PKI"
  sed -e "s|@DIR@|$PKI|g" -e "s|@CERT@|$PKI/chain.pem|" -e "s|@KEY@|$PKI/key.pem|" \
    -e "s|@PORT@|$port|" "$root/bench/nginx-tls.conf" > "$PKI/nginx.conf"
  ulimit -n "$(ulimit -Hn)"
  taskset -c 0 nginx -p "$PKI" -e "$PKI/error.log" -c "$PKI/nginx.conf" &
  NGINX=$!
  trap 'kill $NGINX 2>/dev/null; wait $NGINX 2>/dev/null; rm -rf "$PKI"' EXIT
  for _ in $(seq 50); do curl -sfk "https://127.0.0.1:$port/json" >/dev/null && break; sleep 0.2; done
}

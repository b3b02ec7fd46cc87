#!/usr/bin/env bash
# bench/tools/segments.sh BIN - TCP segments per request between wrk and an uncapped `twelve serve` (CPU 0,
# one worker; wrk on CPU 1, -c256, 4 s): keep-alive GET /json, then /plaintext pipelined 16.
# Both ends are on this host, so nstat's TcpOutSegs counts the client's segments and the
# server's: 2 per request is one request and one response, and anything above is pure ACKs
# or window updates (bench/runs/2026-11-26-segments). Stops the server it starts, by PID.
set -euo pipefail
BIN=${1:?usage: segments.sh BIN}; PORT=8099
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
taskset -c 0 "$BIN" serve --listen "127.0.0.1:$PORT" --cpus 0 > /dev/null 2>&1 &
SP=$!
trap 'kill $SP; wait $SP 2>/dev/null' EXIT
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PORT/json" > /dev/null && break; sleep 0.1; done
OUT=$(mktemp)
for mode in json pipelined; do
  nstat -n > /dev/null
  if [ $mode = json ]; then
    taskset -c 1 wrk -t1 -c256 -d4s "http://127.0.0.1:$PORT/json" > "$OUT"
  else
    taskset -c 1 wrk -t1 -c256 -d4s -s "$ROOT/bench/pipeline.lua" "http://127.0.0.1:$PORT/plaintext" -- 16 > "$OUT"
  fi
  n=$(awk '/requests in/{print $1}' "$OUT")
  echo "== $mode: $n requests"
  nstat | awk -v n="$n" '/TcpOutSegs|TcpInSegs|PureAcks|DelayedACKs|TCPHPAcks|OrigDataSent|TcpActiveOpens/{
    printf "%-24s %10d %8.3f a request\n", $1, $2, $2 / n}'
done
rm -f "$OUT"

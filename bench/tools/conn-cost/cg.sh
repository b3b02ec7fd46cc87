#!/bin/bash
# bench/tools/conn-cost/cg.sh BIN PORT [RECONN] [CONNS]: user-space instructions per connection (and per request) of the httparena
# example under callgrind: two gcannon runs (2 s and 6 s), difference of the totals over the difference of
# connections (requests), so start-up and shutdown cancel out.
# Made for bench/runs/2026-11-23-conn-cost (run from a scratch directory, WORK=/tmp/m). gcannon and
# HttpArena's engines: ARENA_BIN=/tmp/peers/httparena (bench/peers/arena/README.md).
bin=$1; port=$2; rr=${3:-10}; c=${4:-1}
ROOT=$(cd "$(dirname "$0")/../../.." && pwd); AB=${ARENA_BIN:-/tmp/peers/httparena}
R=$ROOT/bench/peers/arena/requests
total() { # DUR -> "instructions requests connections"
  local out=$(mktemp) gc=$(mktemp)
  TWELVE_IO=${IO:-epoll} taskset -c 0 valgrind --tool=callgrind --callgrind-out-file=$out $bin 127.0.0.1:$port >/dev/null 2>&1 &
  local vp=$!
  for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/baseline11?a=1&b=2" && break; sleep 0.2; done
  taskset -c 1 timeout $(( $1 + 20 )) $AB/gcannon http://127.0.0.1:$port --raw ${RAW:-$R/get.raw} -c $c -t 1 -d ${1}s -p 1 -r $rr > $gc
  kill -TERM $vp; wait $vp
  local ins=$(awk '/^summary:|^totals:/{print $2; exit}' $out)
  local req=$(awk '/requests in/{print $1}' $gc) rec=$(awk '/Reconnects/{print $2}' $gc)
  echo "$ins $req $((rec + c))"; [ -n "$KEEP" ] && [ $1 = 6 ] && cp $out $KEEP; rm -f $out $gc
}
read i1 q1 n1 <<< "$(total 2)"; read i2 q2 n2 <<< "$(total 6)"
awk -v a=$i1 -v b=$i2 -v q1=$q1 -v q2=$q2 -v n1=$n1 -v n2=$n2 'BEGIN{printf "%d->%d instr, %d->%d req, %d->%d conns: %.0f instr/conn, %.0f instr/req\n", a,b,q1,q2,n1,n2,(b-a)/(n2-n1),(b-a)/(q2-q1)}'

#!/usr/bin/env bash
# bench/tools/min-batch-capped.sh: twelve a/b/c capped 50% on CPU 0 one at a time; wrk on CPU 1; req/s per round
# (bench/runs/2026-11-26-min-batch). The three builds are /tmp/st/twelve-{a,b,c} (ST=/tmp/st).
# Env: TEST=json|plain ROUNDS=5 D=5
set -euo pipefail
SH=$(cd "$(dirname "$0")/.." && pwd); ST=${ST:-/tmp/st}; ROUNDS=${ROUNDS:-5}; D=${D:-5}; TEST=${TEST:-json}
declare -A PORT PID
for s in a b c; do p=$((8200 + $(printf '%d' "'$s") - 96)); taskset -c 0 "$ST/twelve-$s" serve --listen 127.0.0.1:$p --cpus 0 >/dev/null 2>&1 & PID[$s]=$!; PORT[$s]=$p; done
trap 'kill ${PID[a]} ${PID[b]} ${PID[c]} 2>/dev/null; $SH/cpu-quota.sh off 1 >/dev/null 2>&1 || true' EXIT
sleep 1
H=(-H 'Host: localhost' -H 'Accept: application/json,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7' -H 'Connection: keep-alive')
for r in $(seq $ROUNDS); do
  for s in a b c; do
    p=${PORT[$s]}
    $SH/cpu-quota.sh 50 $p >/dev/null
    if [ $TEST = json ]; then
      timeout 20 taskset -c 1 wrk -t1 -c256 -d2s "${H[@]}" http://127.0.0.1:$p/json >/dev/null 2>&1
      out=$(timeout 30 taskset -c 1 wrk -t1 -c256 -d${D}s "${H[@]}" http://127.0.0.1:$p/json 2>&1)
    else
      timeout 20 taskset -c 1 wrk -t1 -c256 -d2s "${H[@]}" -s $SH/pipeline.lua http://127.0.0.1:$p/plaintext -- 16 >/dev/null 2>&1
      out=$(timeout 30 taskset -c 1 wrk -t1 -c256 -d${D}s "${H[@]}" -s $SH/pipeline.lua http://127.0.0.1:$p/plaintext -- 16 2>&1)
    fi
    $SH/cpu-quota.sh off $p >/dev/null
    echo "$r $s $(echo "$out" | awk '/^Requests\/sec/{print $2}')"
  done
done

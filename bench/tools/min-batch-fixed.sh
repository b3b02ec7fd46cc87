#!/usr/bin/env bash
# bench/tools/min-batch-fixed.sh: uncapped servers on CPU 0, twelve bench -R RATE -c64 on CPU 1, interleaved;
# server CPU us/req (bench/runs/2026-11-26-min-batch). The builds are /tmp/st/twelve-{a,b,c} (ST=/tmp/st),
# lr is TechEmpower's libreactor at LIBREACTOR_BIN. Env: SERVERS="a b lr" RATE=50755 ROUNDS=5 D=5 URLP=/json
set -euo pipefail
ST=${ST:-/tmp/st}; LR=${LIBREACTOR_BIN:-/tmp/peers/libreactor-8086/libreactor}
RATE=${RATE:-50755}; ROUNDS=${ROUNDS:-5}; D=${D:-5}; URLP=${URLP:-/json}
declare -A PORT PID
taskset -c 0 "$ST/twelve-a" serve --listen 127.0.0.1:8201 --cpus 0 >/dev/null 2>&1 & PID[a]=$!; PORT[a]=8201
taskset -c 0 "$ST/twelve-b" serve --listen 127.0.0.1:8202 --cpus 0 >/dev/null 2>&1 & PID[b]=$!; PORT[b]=8202
taskset -c 0 "$ST/twelve-c" serve --listen 127.0.0.1:8203 --cpus 0 >/dev/null 2>&1 & PID[c]=$!; PORT[c]=8203
taskset -c 0 "$LR" >/dev/null 2>&1 & PID[lr]=$!; PORT[lr]=8086
trap 'kill ${PID[c]} ${PID[a]} ${PID[b]} 2>/dev/null; pkill -P ${PID[lr]} 2>/dev/null; kill ${PID[lr]} 2>/dev/null' EXIT
sleep 1
ticks() { local t=0 p; for p in $(ss -Hltnp "sport = :$1" | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u); do t=$((t + $(awk '{print $14+$15}' /proc/$p/stat))); done; echo $t; }
for r in $(seq $ROUNDS); do
  for s in ${SERVERS:-a b lr}; do
    p=${PORT[$s]}
    t0=$(ticks $p)
    out=$(timeout 30 taskset -c 1 "$ST/twelve-a" bench "http://127.0.0.1:$p$URLP" -R $RATE -c 64 -d ${D}s --warmup 0 --cpus 1 --json 2>/dev/null)
    t1=$(ticks $p)
    req=$(echo "$out" | python3 -c 'import json,sys; t=sys.stdin.read(); d=json.JSONDecoder().raw_decode(t,t.index("{"))[0]; print(d["requests"])')
    echo "$r $s req=$req us/req=$(awk -v t=$((t1-t0)) -v n=$req 'BEGIN{printf "%.3f", t*10000/n}')"
  done
done

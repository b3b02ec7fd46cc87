#!/bin/bash
# bench/tools/conn-cost/seq.sh NAME PORT PID : strace a 1 s, -c 1 -r 10 gcannon run against PID
# Made for bench/runs/2026-11-23-conn-cost (run from a scratch directory, WORK=/tmp/m). gcannon and
# HttpArena's engines: ARENA_BIN=/tmp/peers/httparena (bench/peers/arena/README.md).
ROOT=$(cd "$(dirname "$0")/../../.." && pwd); AB=${ARENA_BIN:-/tmp/peers/httparena}; W=${WORK:-/tmp/m}; mkdir -p "$W"
name=$1; port=$2; pid=$3
strace -f -o $W/seq-$name.txt -p $pid & SP=$!
sleep 0.5
taskset -c 1 timeout 10 $AB/gcannon http://127.0.0.1:$port --raw $ROOT/bench/peers/arena/requests/get.raw -c 1 -t 1 -d 1s -p 1 -r 10 | grep -E 'requests in|Reconnects'
sleep 0.3; kill $SP; wait $SP 2>/dev/null

#!/bin/bash
# seq.sh NAME PORT PID : strace a 1 s, -c 1 -r 10 gcannon run against PID
name=$1; port=$2; pid=$3
strace -f -o /tmp/m/seq-$name.txt -p $pid & SP=$!
sleep 0.5
taskset -c 1 timeout 10 /tmp/peers/httparena/gcannon http://127.0.0.1:$port --raw /work/shared/bench/arena/requests/get.raw -c 1 -t 1 -d 1s -p 1 -r 10 | grep -E 'requests in|Reconnects'
sleep 0.3; kill $SP; wait $SP 2>/dev/null

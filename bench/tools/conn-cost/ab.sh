#!/bin/bash
# bench/tools/conn-cost/ab.sh ROUNDS DUR name=port:pid ... : capped (50% of a core, own cgroup per server) limited-conn runs, interleaved
# Made for bench/runs/2026-11-23-conn-cost (run from a scratch directory, WORK=/tmp/m). gcannon and
# HttpArena's engines: ARENA_BIN=/tmp/peers/httparena (bench/peers/arena/README.md).
ROOT=$(cd "$(dirname "$0")/../../.." && pwd); AB=${ARENA_BIN:-/tmp/peers/httparena}; W=${WORK:-/tmp/m}; mkdir -p "$W"
rounds=$1; dur=$2; shift 2
CG=/sys/fs/cgroup/cpu
for t in "$@"; do n=${t%%=*}; pid=${t##*:}; d=$CG/bench-m-$n; mkdir -p $d; echo 10000 > $d/cpu.cfs_period_us; echo 5000 > $d/cpu.cfs_quota_us
  for task in /proc/$pid/task/*; do echo ${task##*/} > $d/tasks; done; done
R=$ROOT/bench/peers/arena/requests
for r in $(seq $rounds); do for t in "$@"; do n=${t%%=*}; rest=${t#*=}; port=${rest%%:*}; pid=${t##*:}
  c0=$(awk '{print $14+$15}' /proc/$pid/stat)
  rps=$(taskset -c 1 timeout $((dur+10)) $AB/gcannon http://127.0.0.1:$port --raw ${RAW:-$R/get.raw,$R/post_cl.raw,$R/post_chunked.raw} -c ${CONNS:-512} -t 1 -d ${dur}s -p 1 -r ${RECONN:-10} | awk '/Throughput/{print $2}')
  c1=$(awk '{print $14+$15}' /proc/$pid/stat)
  echo "$r $n $rps cpu=$(( (c1-c0)*10 ))ms"; done; done | tee $W/ab-last.txt
for t in "$@"; do n=${t%%=*}; pid=${t##*:}; d=$CG/bench-m-$n; for task in $(cat $d/tasks); do echo $task > $CG/tasks; done; rmdir $d; done
awk '{v[$2]=v[$2]" "$3} END{for(k in v) print k": "v[k]}' $W/ab-last.txt

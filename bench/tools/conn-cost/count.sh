#!/bin/bash
# bench/tools/conn-cost/count.sh NAME PORT PID [CONNS] [DUR]: syscalls per connection under a bounded gcannon -r 10 run
# Made for bench/runs/2026-11-23-conn-cost (run from a scratch directory, WORK=/tmp/m). gcannon and
# HttpArena's engines: ARENA_BIN=/tmp/peers/httparena (bench/peers/arena/README.md).
ROOT=$(cd "$(dirname "$0")/../../.." && pwd); AB=${ARENA_BIN:-/tmp/peers/httparena}; W=${WORK:-/tmp/m}; mkdir -p "$W"
name=$1; port=$2; pid=$3; c=${4:-64}; d=${5:-3}
ev=raw_syscalls:sys_enter,io_uring:io_uring_submit_req
for s in accept4 accept epoll_wait epoll_pwait epoll_ctl recvfrom sendto read write close shutdown setsockopt getsockopt io_uring_enter newfstatat; do ev="$ev,syscalls:sys_enter_$s"; done
if [ -n "$CAP" ]; then CG=/sys/fs/cgroup/cpu/bench-m-count; mkdir -p $CG; echo 10000 > $CG/cpu.cfs_period_us; echo 5000 > $CG/cpu.cfs_quota_us; for t in /proc/$pid/task/*; do echo ${t##*/} > $CG/tasks; done; fi
cpu0=$(awk '{print $14+$15}' /proc/$pid/stat); u0=$(awk '{print $14}' /proc/$pid/stat)
perf stat -x, -e "$ev" -p $pid -o $W/count-$name.perf & PP=$!
sleep 0.3
taskset -c 1 timeout $((d+10)) $AB/gcannon http://127.0.0.1:$port --raw ${RAW:-$ROOT/bench/peers/arena/requests/get.raw} -c $c -t 1 -d ${d}s -p 1 -r 10 > $W/count-$name.gc
sleep 0.3; cpu1=$(awk '{print $14+$15}' /proc/$pid/stat); u1=$(awk '{print $14}' /proc/$pid/stat); kill -INT $PP; wait $PP 2>/dev/null
if [ -n "$CAP" ]; then for t in $(cat $CG/tasks); do echo $t > /sys/fs/cgroup/cpu/tasks; done; rmdir $CG; fi
reqs=$(awk '/requests in/{print $1}' $W/count-$name.gc)
rec=$(awk '/Reconnects/{print $2}' $W/count-$name.gc)
conns=$((rec + c))
echo "$name: cpu $(( (cpu1-cpu0)*10 )) ms (user $(( (u1-u0)*10 )) ms) = $(awk -v c=$((cpu1-cpu0)) -v n=$reqs 'BEGIN{printf "%.2f", c*10000/n}') us/req; $reqs requests, $conns connections ($(grep Throughput $W/count-$name.gc))"
awk -F, -v n=$conns -v r=$reqs '$3 ~ /sys|io_uring/ && $1+0>0 {printf "  %-36s %10d  %6.2f/conn %6.3f/req\n", $3, $1, $1/n, $1/r}' $W/count-$name.perf

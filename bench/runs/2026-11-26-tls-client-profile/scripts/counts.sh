#!/usr/bin/env bash
# counts.sh NAME WORKLOAD [D]: syscalls per request (perf stat on the client process), wakeups of nginx
# and of the client (system-wide sched_wakeup by wakee comm), TCP segments on loopback (nstat, both sides).
set -euo pipefail
ulimit -n "$(ulimit -Hn)"
name=$1; wl=$2; D=${3:-3}
B=/tmp/tlsprof/target/bench-bin/twelve; CA=/tmp/tlsprof/pki/ca.pem; URL=https://localhost:8444/json
case $name in
  wrk) cmd=(wrk -t1 -c64 -d${D}s); [ "$wl" = close ] && cmd+=(-H 'Connection: close'); comm=wrk ;;
  twelve*) cmd=($B bench -t1 -c64 -d${D}s --warmup 0 --cpus 1 --json); comm=twelve-load-0
     case $name in *insecure*) cmd+=(--insecure);; *) cmd+=(--cacert $CA);; esac
     case $name in *epoll*) cmd+=(--io epoll);; esac
     case $name in *uring*) cmd+=(--io uring);; esac
     case $name in *full*) cmd+=(--no-tls-resume);; esac
     case $name in *coff*) cmd+=(--coalesce off);; esac
     case $name in *nap50us*) cmd+=(--coalesce 50us);; esac
     [ "$wl" = close ] && cmd+=(--close) ;;
esac
cmd+=($URL)
out=/tmp/tlsprof/counts/$wl-$name
perf stat -a -x, -o $out.wakeups.csv \
  -e sched:sched_wakeup --filter 'comm == "nginx"' \
  -e sched:sched_waking --filter "comm == \"$comm\"" \
  -e sched:sched_switch \
  -e irq_vectors:call_function_single_entry -e irq_vectors:reschedule_entry \
  -- sleep $((D+1)) &
wpid=$!
sleep 0.3
nstat -n
perf stat -x, -o $out.sys.csv -e 'syscalls:sys_enter_*' -e context-switches,cpu-migrations,task-clock \
  -- taskset -c 1 "${cmd[@]}" > $out.client.txt 2>&1
nstat > $out.nstat.txt
wait $wpid
echo $out

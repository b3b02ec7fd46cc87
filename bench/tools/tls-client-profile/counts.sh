#!/usr/bin/env bash
# shellcheck disable=SC2154  # cmd and comm are set by client_cmd (client-cmd.sh)
# counts.sh NAME WORKLOAD [D]: syscalls per request (perf stat on the client process), wakeups of nginx
# and of the client (system-wide sched_wakeup by wakee comm), TCP segments on loopback (nstat, both sides).
set -euo pipefail
ulimit -n "$(ulimit -Hn)"
name=$1; wl=$2; D=${3:-3}
# shellcheck source=client-cmd.sh
. "$(dirname "$0")/client-cmd.sh"
client_cmd "$name" "$wl" "$D"
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

#!/usr/bin/env bash
# bench/wrk-rounds.sh - interleaved wrk load runs (A B C A B C ...) against servers that are ALREADY
# running on 127.0.0.1, with server and client CPU accounting. Needs only Debian packages
# (wrk, iproute2 `ss`, util-linux `taskset`, gawk/mawk).
#
# Usage: bench/wrk-rounds.sh TEST ROUNDS name=port [name=port ...]
#   TEST      json       GET /json, keep-alive
#             plaintext  GET /plaintext, keep-alive, $PIPELINE requests pipelined per write
#             close      GET /json with "Connection: close" (new TCP connection per request)
#   ROUNDS    how many interleaved rounds (each round runs every target once)
# Environment (defaults):
#   CONNS=256 DURATION=10s WARMUP=2s PIPELINE=16 CLIENT_CPU=1 SERVER_CPU=0 OUTDIR=/tmp/bench-out
#
# For every measured run it prints one TSV line:
#   test name round rps p50 p99 errors srv_user_s srv_sys_s srv_cpu_s req_per_srv_cpu_s
#   wrk_user_s wrk_sys_s wrk_cpu_frac cpuS_busy% cpuS_sys% cpuS_softirq% cpuS_steal%
#   cpuC_busy% cpuC_steal%
# srv_* are summed utime/stime (from /proc/PID/stat) of every process holding the listening
# socket (found with `ss -ltnp`), i.e. all threads of nginx master+worker, h2o, etc.
# cpuS/cpuC columns are from /proc/stat for SERVER_CPU / CLIENT_CPU over the measured run.
# Raw wrk output goes to $OUTDIR/<test>-<name>-<round>.txt.
set -euo pipefail

TEST=${1:?test: json|plaintext|close}; ROUNDS=${2:?rounds}; shift 2
CONNS=${CONNS:-256}; DURATION=${DURATION:-10s}; WARMUP=${WARMUP:-2s}; PIPELINE=${PIPELINE:-16}
CLIENT_CPU=${CLIENT_CPU:-1}; SERVER_CPU=${SERVER_CPU:-0}; OUTDIR=${OUTDIR:-/tmp/bench-out}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUTDIR"
HZ=$(getconf CLK_TCK)

case $TEST in
  json)      PATH_=/json;      WRKARGS=() ;;
  plaintext) PATH_=/plaintext; WRKARGS=(-s "$HERE/pipeline.lua") ;;
  close)     PATH_=/json;      WRKARGS=(-H 'Connection: close') ;;
  *) echo "unknown test $TEST" >&2; exit 2 ;;
esac
# TechEmpower-like request headers
HDRS=(-H 'Host: localhost' -H 'Accept: application/json,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7')

pids_on_port() { # every pid holding the listening socket on port $1
  ss -Hltnp "sport = :$1" | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u | tr '\n' ' '
}
proc_ticks() { # sum utime stime over pids
  local u=0 s=0 f
  for p in "$@"; do
    f=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null) || continue
    set -- $f
    u=$((u + ${12})); s=$((s + ${13}))
  done
  echo "$u $s"
}
cpu_line() { grep "^cpu$1 " /proc/stat; }  # user nice system idle iowait irq softirq steal
cpu_delta() { # $1=before line $2=after line -> busy% sys% softirq% steal%
  awk -v a="$1" -v b="$2" 'BEGIN{ split(a,x," "); split(b,y," ");
    for(i=2;i<=9;i++){d[i]=y[i]-x[i]; t+=d[i]}
    if(t==0)t=1; busy=t-d[5]-d[6];
    printf "%.1f\t%.1f\t%.1f\t%.1f", 100*busy/t, 100*d[4]/t, 100*d[8]/t, 100*d[9]/t }'
}
wrk_cmd() { # $1=port $2=duration
  local extra=()
  [ "$TEST" = plaintext ] && extra=(-- "$PIPELINE")
  taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNS" -d"$2" --timeout 5s --latency "${HDRS[@]}" \
    "${WRKARGS[@]}" "http://127.0.0.1:$1$PATH_" "${extra[@]}"
}
to_ms() { # wrk latency token (e.g. 1.23ms, 850.00us, 1.02s) -> ms
  awk -v v="$1" 'BEGIN{ if(v~/us$/){sub(/us$/,"",v);print v/1000} else if(v~/ms$/){sub(/ms$/,"",v);print v+0}
    else if(v~/s$/){sub(/s$/,"",v);print v*1000} else print v }'
}

printf 'test\tname\tround\trps\tp50_ms\tp99_ms\terrors\tsrv_user_s\tsrv_sys_s\tsrv_cpu_s\treq_per_srv_cpu_s\twrk_user_s\twrk_sys_s\twrk_cpu_frac\tcpuS_busy%%\tcpuS_sys%%\tcpuS_softirq%%\tcpuS_steal%%\tcpuC_busy%%\tcpuC_sys%%\tcpuC_softirq%%\tcpuC_steal%%\n'
for ((r = 1; r <= ROUNDS; r++)); do
  for t in "$@"; do
    name=${t%%=*}; port=${t##*=}
    pids=$(pids_on_port "$port")
    [ -n "$pids" ] || { echo "nothing listening on $port" >&2; exit 1; }
    wrk_cmd "$port" "$WARMUP" > /dev/null 2>&1 || true   # warm-up, not measured
    sleep 1
    out="$OUTDIR/$TEST-$name-$r.txt"
    read -r u0 s0 < <(proc_ticks $pids)
    cs0=$(cpu_line "$SERVER_CPU"); cc0=$(cpu_line "$CLIENT_CPU")
    TIMEFORMAT='%U %S %R'
    { time wrk_cmd "$port" "$DURATION" > "$out" 2>&1 ; } 2> "$out.time"
    cs1=$(cpu_line "$SERVER_CPU"); cc1=$(cpu_line "$CLIENT_CPU")
    read -r u1 s1 < <(proc_ticks $pids)
    read -r wu ws wr < "$out.time"
    rps=$(awk '/^Requests\/sec/{print $2}' "$out")
    total=$(awk '/requests in/{print $1}' "$out")
    p50=$(to_ms "$(awk '$1=="50%"{print $2}' "$out")")
    p99=$(to_ms "$(awk '$1=="99%"{print $2}' "$out")")
    errs=$(awk '/Socket errors/{gsub(/,/,"");e=$4+$6+$8+$10} /Non-2xx/{e+=$NF} END{print e+0}' "$out")
    su=$(awk -v a=$u0 -v b=$u1 -v hz=$HZ 'BEGIN{printf "%.2f",(b-a)/hz}')
    ss_=$(awk -v a=$s0 -v b=$s1 -v hz=$HZ 'BEGIN{printf "%.2f",(b-a)/hz}')
    sc=$(awk -v a=$su -v b=$ss_ 'BEGIN{printf "%.2f",a+b}')
    rpc=$(awk -v n=$total -v c=$sc 'BEGIN{ if(c>0) printf "%.0f",n/c; else print "NA"}')
    wf=$(awk -v u=$wu -v s=$ws -v r=$wr 'BEGIN{printf "%.2f",(u+s)/r}')
    printf '%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
      "$TEST" "$name" "$r" "$rps" "$p50" "$p99" "$errs" "$su" "$ss_" "$sc" "$rpc" "$wu" "$ws" "$wf" \
      "$(cpu_delta "$cs0" "$cs1")" "$(cpu_delta "$cc0" "$cc1")"
  done
done

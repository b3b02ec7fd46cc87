#!/usr/bin/env bash
# profile.sh NAME WORKLOAD(json|close) [callgraph: none|dwarf] : perf record of one client run (8 s) pinned to CPU 1.
set -euo pipefail
ulimit -n "$(ulimit -Hn)"
name=$1; wl=$2; cg=${3:-none}; D=${D:-8}
B=/tmp/tlsprof/target/bench-bin/twelve; CA=/tmp/tlsprof/pki/ca.pem; URL=https://localhost:8444/json
case $name in
  wrk) cmd=(wrk -t1 -c64 -d${D}s); [ "$wl" = close ] && cmd+=(-H 'Connection: close') ;;
  twelve*) cmd=($B bench -t1 -c64 -d${D}s --warmup 0 --cpus 1 --json)
     case $name in *insecure*) cmd+=(--insecure);; *) cmd+=(--cacert $CA);; esac
     case $name in *epoll*) cmd+=(--io epoll);; esac
     case $name in *uring*) cmd+=(--io uring);; esac
     case $name in *full*) cmd+=(--no-tls-resume);; esac
     case $name in *coff*) cmd+=(--coalesce off);; esac
     case $name in *nap50us*) cmd+=(--coalesce 50us);; esac
     case $name in *exp*) cmd[0]=/tmp/tlsprof/target-exp/bench-bin/twelve;; esac
     [ "$wl" = close ] && cmd+=(--close) ;;
esac
cmd+=($URL)
out=/tmp/tlsprof/perf/$wl-$name-$cg
case $cg in dwarf) cgo=(--call-graph dwarf,16384 -F 1999);; fp) cgo=(-g -F 4999);; *) cgo=(-F 4999);; esac
timeout $((D+60)) perf record -q "${cgo[@]}" -o $out.data -- taskset -c 1 "${cmd[@]}" > $out.client.txt 2>&1
perf report -i $out.data --no-children --sort dso,sym --stdio 2>/dev/null | grep -v '^$' > $out.report.txt
perf report -i $out.data --no-children --sort dso --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' > $out.dso.txt
echo "$out"

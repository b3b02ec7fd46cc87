#!/usr/bin/env bash
# shellcheck disable=SC2154  # cmd and comm are set by client_cmd (client-cmd.sh)
# profile.sh NAME WORKLOAD(json|close) [callgraph: none|dwarf] : perf record of one client run (8 s) pinned to CPU 1.
set -euo pipefail
ulimit -n "$(ulimit -Hn)"
name=$1; wl=$2; cg=${3:-none}; D=${D:-8}
# shellcheck source=client-cmd.sh
. "$(dirname "$0")/client-cmd.sh"
client_cmd "$name" "$wl" "$D"
out=/tmp/tlsprof/perf/$wl-$name-$cg
# shellcheck disable=SC2054  # "dwarf,16384" is one argument
case $cg in dwarf) cgo=(--call-graph dwarf,16384 -F 1999);; fp) cgo=(-g -F 4999);; *) cgo=(-F 4999);; esac
timeout $((D+60)) perf record -q "${cgo[@]}" -o $out.data -- taskset -c 1 "${cmd[@]}" > $out.client.txt 2>&1
perf report -i $out.data --no-children --sort dso,sym --stdio 2>/dev/null | grep -v '^$' > $out.report.txt
perf report -i $out.data --no-children --sort dso --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' > $out.dso.txt
echo "$out"

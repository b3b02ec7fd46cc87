# shellcheck shell=bash
# bench/ticks.sh - sourced by the bench scripts that read a server's CPU time from /proc:
#   pids_on PORT        the PIDs holding a listener on PORT, space-separated
#   ticks PID...        utime+stime, in clock ticks, of the given PIDs (a gone PID counts 0)
#   HZ                  clock ticks per second
pids_on() { ss -Hltnp "sport = :$1" | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u | tr '\n' ' '; }
ticks() {
  local t=0 f p
  for p in "$@"; do
    f=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null) || continue
    # shellcheck disable=SC2086
    set -- $f
    t=$((t + ${12} + ${13}))
  done
  echo "$t"
}
HZ=$(getconf CLK_TCK)

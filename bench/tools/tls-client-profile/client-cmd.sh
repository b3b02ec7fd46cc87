# shellcheck shell=bash disable=SC2034  # sets cmd and comm for the scripts that source it
# client-cmd.sh (sourced by counts.sh and profile.sh): client_cmd NAME WORKLOAD SECONDS sets
# `cmd` to the client's command line and `comm` to its thread name. NAME is wrk or twelve with
# tags: insecure, epoll, uring, full (--no-tls-resume), coff (--coalesce off), nap50us, exp
# (the experiment build).
B=/tmp/tlsprof/target/bench-bin/twelve; CA=/tmp/tlsprof/pki/ca.pem; URL=https://localhost:8444/json
client_cmd() {
  local name=$1 wl=$2 d=$3
  case $name in
    wrk) cmd=(wrk -t1 -c64 -d"${d}s"); [ "$wl" = close ] && cmd+=(-H 'Connection: close'); comm=wrk ;;
    twelve*) cmd=("$B" bench -t1 -c64 -d"${d}s" --warmup 0 --cpus 1 --json); comm=twelve-load-0
       case $name in *insecure*) cmd+=(--insecure);; *) cmd+=(--cacert "$CA");; esac
       case $name in *epoll*) cmd+=(--io epoll);; esac
       case $name in *uring*) cmd+=(--io uring);; esac
       case $name in *full*) cmd+=(--no-tls-resume);; esac
       case $name in *coff*) cmd+=(--coalesce off);; esac
       case $name in *nap50us*) cmd+=(--coalesce 50us);; esac
       case $name in *exp*) cmd[0]=/tmp/tlsprof/target-exp/bench-bin/twelve;; esac
       [ "$wl" = close ] && cmd+=(--close) ;;
  esac
  cmd+=("$URL")
}

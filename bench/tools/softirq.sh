#!/usr/bin/env bash
# bench/tools/softirq.sh NAME... (bench/runs/2026-11-26-softirq): each server capped at 50% on CPU 0, gcannon -c512 baseline 5 s on CPU 1;
# server CPU, ksoftirqd/0 and /1 CPU, and /proc/stat softirq+system of cpu0 over the run.
# NAME: twelve, twelve-uring (the httparena example, HA), libreactorng, ringzero, rust-epoll
# (HttpArena's engines in ARENA_BIN, bench/peers/arena/README.md). Env: ARENA_BIN=/tmp/peers/httparena
# GCANNON=$ARENA_BIN/gcannon HA=<the workspace's target/bench-bin/examples/httparena> CONNS=512 D=5
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SH=$ROOT/bench; R=$SH/peers/arena/requests; AB=${ARENA_BIN:-/tmp/peers/httparena}; G=${GCANNON:-$AB/gcannon}
HA=${HA:-$ROOT/target/bench-bin/examples/httparena}
CONNS=${CONNS:-512}; D=${D:-5}
kt() { local p; p=$(pgrep -x "ksoftirqd/$1"); awk '{print $14+$15}' /proc/$p/stat; }
# cpu0's user+nice, system, irq and softirq ticks from /proc/stat (fields 2-3, 4, 7, 8).
c0stat() { awk '$1=="cpu0"{print $2+$3, $4, $7, $8}' /proc/stat; }
for name in "$@"; do
  case $name in
    twelve) port=8094; taskset -c 0 $HA 127.0.0.1:$port >/dev/null 2>&1 & ;;
    twelve-uring) port=8096; TWELVE_IO=uring taskset -c 0 $HA 127.0.0.1:$port >/dev/null 2>&1 & ;;
    libreactorng) port=8093; PORT=8093 taskset -c 0 $AB/libreactorng >/dev/null 2>&1 & ;;
    ringzero) port=8092; PORT=8092 taskset -c 0 $AB/ringzero 1 >/dev/null 2>&1 & ;;
    rust-epoll) port=8091; PORT=8091 taskset -c 0 $AB/rust-epoll >/dev/null 2>&1 & ;;
  esac
  sleep 1
  pids=$(ss -Hltnp "sport = :$port" | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u)
  $SH/cpu-quota.sh 50 $port >/dev/null
  timeout 20 taskset -c 1 $G http://127.0.0.1:$port --raw $R/get.raw,$R/post_cl.raw,$R/post_chunked.raw -c $CONNS -t 1 -d 2s -p 1 >/dev/null 2>&1 || true
  s0=0; for p in $pids; do s0=$((s0 + $(awk '{print $14+$15}' /proc/$p/stat))); done
  k00=$(kt 0); k10=$(kt 1); st0=($(c0stat))
  out=$(timeout 30 taskset -c 1 $G http://127.0.0.1:$port --raw $R/get.raw,$R/post_cl.raw,$R/post_chunked.raw -c $CONNS -t 1 -d ${D}s -p 1 --json 2>/dev/null || true)
  s1=0; for p in $pids; do s1=$((s1 + $(awk '{print $14+$15}' /proc/$p/stat))); done
  k01=$(kt 0); k11=$(kt 1); st1=($(c0stat))
  $SH/cpu-quota.sh off $port >/dev/null
  for p in $pids; do kill $p 2>/dev/null || true; done
  req=$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["responses"])')
  printf "%-13s req=%7d rps=%6.0f srv=%4d ksoftirqd0=%3d ksoftirqd1=%3d cpu0: user=%d sys=%d irq=%d softirq=%d (ticks)\n" \
    $name $req $((req / D)) $((s1 - s0)) $((k01 - k00)) $((k11 - k10)) $((st1[0]-st0[0])) $((st1[1]-st0[1])) $((st1[2]-st0[2])) $((st1[3]-st0[3]))
  sleep 3
done

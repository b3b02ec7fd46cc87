#!/usr/bin/env bash
# bench/tools/engine-harness/count.sh [SHAPE] - user-space instructions per pipelined request of
# one request shape through the engine's sans-I/O connection: builds the harness beside this
# script for x86-64-v3 (as bench/callgrind.sh builds the server), runs it for 100 and for 1000
# rounds of 16 requests under callgrind, and prints (I(1000) - I(100)) / 14400.
# SHAPE: pipeline (HttpArena pipelined, the default), get, post, chunked (HttpArena baseline),
# tfb (TechEmpower plaintext with bench/callgrind.sh's headers). Needs valgrind.
# Env: CARGO_TARGET_DIR (default: the workspace's target/engine-harness)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target/engine-harness}
RUSTFLAGS="-C target-cpu=x86-64-v3" cargo build -q --release --manifest-path "$HERE/Cargo.toml"
B=$CARGO_TARGET_DIR/release/engine-harness
P=${1:-pipeline}
OUT=$(mktemp -d /tmp/engine-harness.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
t() { valgrind --tool=callgrind --callgrind-out-file="$OUT/out-$1-$P" "$B" "$1" "$P" >/dev/null 2>&1; awk '/^summary:|^totals:/{print $2; exit}' "$OUT/out-$1-$P"; }
a=$(t 100); b=$(t 1000)
awk -v a="$a" -v b="$b" 'BEGIN{printf "%.1f instructions per request (%d, %d)\n", (b-a)/14400, a, b}'

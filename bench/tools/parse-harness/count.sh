#!/usr/bin/env bash
# bench/tools/parse-harness/count.sh - parse-only user-space instructions per request: builds the
# harness beside this script for x86-64-v3 (as bench/callgrind.sh builds the server), runs it for
# 100 and 1000 rounds of 16 requests under callgrind and prints (I(1000) - I(100)) / (900 * 16).
# Needs valgrind. Env: CARGO_TARGET_DIR (default: the workspace's target/parse-harness)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target/parse-harness}
RUSTFLAGS="-C target-cpu=x86-64-v3" cargo build -q --release --manifest-path "$HERE/Cargo.toml"
B=$CARGO_TARGET_DIR/release/parse-harness
OUT=$(mktemp -d /tmp/parse-harness.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
t() { valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.$1" "$B" "$1" >/dev/null 2>&1; awk '/^summary:|^totals:/{print $2; exit}' "$OUT/cg.$1"; }
a=$(t 100); b=$(t 1000)
awk -v a="$a" -v b="$b" 'BEGIN{printf "parse-only: %.1f instructions per request (%d, %d)\n", (b-a)/(900*16), a, b}'

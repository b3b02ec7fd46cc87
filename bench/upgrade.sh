#!/usr/bin/env bash
# bench/upgrade.sh - zero failed requests over N upgrades under load: `twelve serve` upgraded N
# times through its control socket, then nginx's binary upgrade (USR2, then QUIT to the old
# master) N times, in the same harness (tests/upgrade.rs: a network namespace of its own, the
# strict client with keep-alive and connection-per-request load, random 0-1 s intervals), and
# the negative controls that must show failures. A count of failures, not a speed claim.
#
# Usage: bench/upgrade.sh [OUTDIR]   (default bench/runs/<date>-upgrade)
# Env:   N=100  PROFILE=dev|release (the build the harness's twelve comes from; dev by default)
# Needs root (ip netns), iproute2 and Debian's nginx. The harness stops what it starts by PID.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/bench/runs/$(date +%F)-upgrade}
N=${N:-100}
PROFILE=${PROFILE:-dev}
cd "$ROOT"
# Before anything is written into OUT, which may be inside the tree.
COMMIT="$(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' (dirty)')"
mkdir -p "$OUT"
release=()
[ "$PROFILE" = release ] && release=(--release)
cargo build -q "${release[@]}" --tests --test upgrade
BIN=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')/$([ "$PROFILE" = release ] && echo release || echo debug)/twelve
{
  echo "# Upgrades under load: twelve against nginx's USR2+QUIT, $N each"
  echo
  echo "- date: $(date -u +%FT%TZ)"
  echo "- twelve: $("$BIN" --version) (cargo profile $PROFILE)"
  echo "- commit: $COMMIT"
  echo "- nginx: $(/usr/sbin/nginx -v 2>&1)"
  echo "- kernel: $(uname -r); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) CPUs"
  echo "- command: N=$N PROFILE=$PROFILE bench/upgrade.sh"
  echo "- harness: TWELVE_UPGRADE_N=$N cargo test ${release[*]} --test upgrade -- --include-ignored --test-threads=1 --nocapture"
} > "$OUT/README.md"
# --include-ignored: the nginx measurement is ignored in a plain `cargo test`.
TWELVE_UPGRADE_N=$N cargo test -q "${release[@]}" --test upgrade -- \
  --include-ignored --test-threads=1 --nocapture > "$OUT/log.txt" 2>&1 || status=$?
# The one-line results of every scenario, twelve's and nginx's side by side.
# (libtest's -q prints a dot per test at the start of the next line: dropped.)
sed 's/^\.*//' "$OUT/log.txt" |
  grep -E '^(twelve,|twelve --io|nginx,|negative control|fresh listeners|SIGTERM under load|upgrade intervals|test )' \
  > "$OUT/summary.txt" || true
cat "$OUT/summary.txt"
exit "${status:-0}"

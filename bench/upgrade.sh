#!/usr/bin/env bash
# bench/upgrade.sh - zero failed requests over N upgrades under load: `twelve serve` and the
# engine's embedded example upgraded N times through their control sockets in the harness of
# tests/upgrade.rs (a network namespace of its own, the strict client with keep-alive and
# connection-per-request load, random 0-1 s intervals), with the negative controls that must
# show failures; then bench/upgrade-nginx.sh: nginx's binary upgrade (USR2, then QUIT to the
# old master) N times beside twelve's, under one loop and one load (`twelve bench`). A count
# of failures, not a speed claim.
#
# Usage: bench/upgrade.sh [OUTDIR]   (default bench/runs/<date>-upgrade)
# Env:   N=100  PROFILE=dev|release (the build the harness's twelve comes from; dev by default)
# Needs root (ip netns), iproute2, curl, jq and Debian's nginx. Both parts stop what they start
# by PID.
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
cargo build -q "${release[@]}" -p twelve-engine --example upgrade
BIN=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')/$([ "$PROFILE" = release ] && echo release || echo debug)/twelve
{
  echo "# Upgrades under load: twelve (binary and embedded) and nginx's USR2+QUIT, $N each"
  echo
  echo "- date: $(date -u +%FT%TZ)"
  echo "- twelve: $("$BIN" --version) (cargo profile $PROFILE)"
  echo "- commit: $COMMIT"
  echo "- nginx: $(/usr/sbin/nginx -v 2>&1)"
  echo "- kernel: $(uname -r); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) CPUs"
  echo "- command: N=$N PROFILE=$PROFILE bench/upgrade.sh"
  echo "- harness: TWELVE_UPGRADE_N=$N cargo test ${release[*]} --test upgrade -- --test-threads=1 --nocapture"
  echo "- beside nginx: N=$N bench/upgrade-nginx.sh $BIN OUTDIR"
} > "$OUT/README.md"
TWELVE_UPGRADE_N=$N cargo test -q "${release[@]}" --test upgrade -- \
  --test-threads=1 --nocapture > "$OUT/log.txt" 2>&1 || status=$?
N=$N "$ROOT/bench/upgrade-nginx.sh" "$BIN" "$OUT" > "$OUT/nginx.txt" 2>&1 || status=$?
# The one-line results of every scenario, then twelve's and nginx's side by side.
# (libtest's -q prints a dot per test at the start of the next line: dropped.)
sed 's/^\.*//' "$OUT/log.txt" "$OUT/nginx.txt" |
  grep -E '^(twelve,|twelve --io|engine example,|engine example --io|nginx,|negative control|fresh listeners|upgrade intervals|test )' \
  > "$OUT/summary.txt" || true
cat "$OUT/summary.txt"
exit "${status:-0}"

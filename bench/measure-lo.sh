#!/usr/bin/env bash
# `twelve doctor --measure net.qdisc` on a loopback shaped by a token bucket, in network and
# mount namespaces of its own (the host's lo is never touched): the doctor's measured effect of
# putting lo back on noqueue, in interleaved rounds of the embedded benchmark. As root.
#
#   bench/measure-lo.sh [TWELVE] [OUT_DIR]     (RATE=5mbit ROUNDS=5 DURATION=2s)
set -euo pipefail
BIN=${1:-target/release/twelve}
OUT=${2:-bench/runs/$(date -u +%F)-measure-lo}
RATE=${RATE:-5mbit}
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-2s}
mkdir -p "$OUT"
BIN=$(realpath "$BIN")
OUT=$(realpath "$OUT")
{
  echo "# twelve doctor --measure net.qdisc, lo shaped to $RATE, in a fresh netns"
  echo
  echo "- date: $(date -u +%FT%TZ); kernel $(uname -r); $(nproc) CPUs"
  echo "- binary: \`$BIN\`: $("$BIN" --version)"
  echo "- inside \`unshare -nm\`: sysfs remounted, lo up, \`tc qdisc add dev lo root tbf rate $RATE burst 32kb latency 50ms\`"
  echo "- command: \`twelve doctor --measure net.qdisc --rounds $ROUNDS -d $DURATION --revert-script $OUT/revert.sh\`"
  echo "- script: \`RATE=$RATE ROUNDS=$ROUNDS DURATION=$DURATION bench/measure-lo.sh $BIN\`"
  echo
  echo '```'
} > "$OUT/README.md"
unshare -nm -- sh -c "
  set -e
  mount -t sysfs sysfs /sys
  ip link set lo up
  tc qdisc add dev lo root tbf rate $RATE burst 32kb latency 50ms
  echo \"before: \$(tc qdisc show dev lo)\"
  '$BIN' doctor --measure net.qdisc --rounds $ROUNDS -d $DURATION --revert-script '$OUT/revert.sh'
  echo \"after:  \$(tc qdisc show dev lo)\"
" | tee "$OUT/output.txt" >> "$OUT/README.md"
echo '```' >> "$OUT/README.md"

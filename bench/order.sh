# shellcheck shell=bash
# bench/order.sh - sourced by the bench scripts that interleave clients or builds in rounds:
#   round_order ROUND ITEM...   the items in ROUND's order (ROUND from 1), one per line: round
#                               2k-1 is the list rotated by k-1, round 2k the same reversed. So
#                               every two rounds each pair of items runs in both orders (an A/B of
#                               two builds never always measures B just after A), and over the
#                               rounds each item runs first in turn.
round_order() {
  local r=$1; shift
  local n=$# k s a=("$@") o=()
  s=$(((r - 1) / 2))
  for ((k = 0; k < n; k++)); do o+=("${a[$(((k + s) % n))]}"); done
  if ((r % 2 == 0)); then for ((k = n - 1; k >= 0; k--)); do echo "${o[$k]}"; done; else printf '%s\n' "${o[@]}"; fi
}

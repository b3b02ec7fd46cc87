#!/usr/bin/env bash
# bench/tools/pack-raw.sh RUN_DIR... - packs every raw/ folder of each run (raw/, run-1/raw/,
# plain-c64/raw/, ...) into RUN_DIR/raw.tar.xz, with paths relative to the run's folder, then
# removes the loose folders once the archive lists every file they held. Names sorted, times,
# owners and xz's blocks fixed, so the same files give the same bytes. bench/runs/INDEX.md says
# how to unpack; run this on a new run before committing it (crates/report/tests/bench_runs.rs
# refuses a raw/ folder under bench/runs).
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: bench/tools/pack-raw.sh RUN_DIR..." >&2; exit 2; }
for dir in "$@"; do
  (
    cd "$dir"
    mapfile -t raws < <(find . -type d -name raw | sed 's|^\./||' | sort)
    if [ ${#raws[@]} -eq 0 ]; then echo "$dir: no raw/ folder"; exit 0; fi
    [ ! -e raw.tar.xz ] || { echo "$dir: raw.tar.xz is there already" >&2; exit 1; }
    XZ_OPT='-9 -T1' tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
      -cJf raw.tar.xz "${raws[@]}"
    if ! diff <(tar -tJf raw.tar.xz | grep -v '/$' | sort) <(find "${raws[@]}" -type f | sort) >&2; then
      rm -f raw.tar.xz; echo "$dir: the archive does not list every file; nothing removed" >&2; exit 1
    fi
    rm -r "${raws[@]}"
    echo "$dir: raw.tar.xz $(du -k raw.tar.xz | cut -f1) KiB"
  )
done

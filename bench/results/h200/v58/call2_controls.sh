#!/usr/bin/env bash
# v58 call 2 (written without a GPU; not run yet), after call 1 passed: the same two builds
# (carry: ["build/carry/land.tgz", "build/carry/dir.tgz"]).
# The candidate's kernels changed for every M: a prologue branch (align's table or the direct
# one) and a skipped instance's zero store. ptxas moved registers in some of them (on the
# build machine: +-2-8 registers in 14 of 52 dense, 44 of 121 fp8 and 9 of 168 integer
# kernels; fp8's unbounded four-tile down kernel 80 registers + 16 bytes of stack -> 90 and
# none, 3 -> 2 resident CTAs). ABBA land / dir where align runs and those kernels do: M = 16
# and 64 (four n-tiles), every GEMV precision, two rounds; then dir's bench at every M for
# bf16 and w4a16 (the table for PERF.md).
# Everything in $OUT/w2.tgz.
source scripts/carried_env.sh
carried_setup w2 land dir || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
TAGS=""
for pr in bf16 w4a16 w8a16 fp8_channel fp8_block fp8_tensor; do
  abba land dir "${pr}_c" --precision $pr --m 16,64
  TAGS="$TAGS ${pr}_c"
  echo "abba $pr $(el) s" >> "$W/info.txt"
done
for pr in bf16 w4a16; do
  timeout 60 "$BIN_dir" bench --precision $pr --json "$W/bench_$pr.json" > "$W/bench_$pr.txt" 2>&1
done
cat "$W/info.txt"
for t in $TAGS; do
  echo "== $t dir / land"
  abba_compare land dir "$t" 12
done
carried_pack

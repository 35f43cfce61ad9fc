#!/usr/bin/env bash
# v58 call 2 (ran on an nvidia-h100-x1 after call 1 passed): the same two builds
# (carry: ["build/carry/land.tgz", "build/carry/dir.tgz"]).
# ABBA land / dir at M = 1 and 2 for the precisions call 1 did not time (w8a16 and the three
# FP8 modes), then where align runs and the changed kernels do: M = 16 and 64 (four n-tiles;
# ptxas moved registers in some GEMV kernels, e.g. fp8's unbounded four-tile down kernel 80
# registers + 16 bytes of stack -> 90 and none, 3 -> 2 resident CTAs), bf16, w4a16,
# fp8_channel; then dir's bench at every M for bf16 and w4a16 (the table for PERF.md).
# Everything in $OUT/w2.tgz.
source scripts/carried_env.sh
carried_setup w2 land dir || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
TAGS=""
for pr in w8a16 fp8_channel fp8_block fp8_tensor; do
  abba land dir "${pr}_a" --precision $pr --m 1,2
  TAGS="$TAGS ${pr}_a"
  echo "abba $pr $(el) s" >> "$W/info.txt"
done
for pr in bf16 w4a16 fp8_channel; do
  abba land dir "${pr}_c" --precision $pr --m 16,64
  TAGS="$TAGS ${pr}_c"
  echo "abba $pr controls $(el) s" >> "$W/info.txt"
done
for pr in bf16 w4a16; do
  [ $(el) -lt 500 ] && timeout 45 "$BIN_dir" bench --precision $pr --json "$W/bench_$pr.json" > "$W/bench_$pr.txt" 2>&1
done
cat "$W/info.txt"
for t in $TAGS; do
  echo "== $t dir / land"
  abba_compare land dir "$t" 12
done
carried_pack

#!/usr/bin/env bash
# v58 call 3 (queued, not run: no device started after call 2): land = main's build (build/carry/land.tgz), fin = the candidate
# with FP8 back on align (one_token_direct for dense and integer weights only; fp8_gemv's
# kernels compiled with WarpPlace<..., kDirect = false>, their prologue as main's), packed as
# build/carry/fin.tgz from 6ccd161 (the branch's head; the landed 513e1b2 adds only the table
# check to wna16_gemv's launchers, host code).   carry: ["build/carry/land.tgz", "build/carry/fin.tgz"]
# 1. the cases the last change touches: the one-token cases (FP8 through align again), every
#    FP8 case on small_m, the CUDA-graph replays, the GEMVs' resident-CTA and forced-split tests;
# 2. ABBA land / fin: FP8 at M = 1, 2 and 16 (each scaling mode; M = 2 and 16 were 1.00-1.04x
#    slower in call 2), bf16 and w4a16 at M = 1 (call 1's gain kept), two rounds each;
# 3. fin's bench at every M, bf16, w4a16 and w8a16 (PERF.md's table), while under 170 s.
# Everything in $OUT/w3.tgz.
source scripts/carried_env.sh
carried_setup w3 land fin || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
FIRST='OneTokenWithoutAlign.*:Paths/Fp8Layer.*/small_m:*CudaGraphReplaysWithNewRouting/small_m:SmallMSplitK.*'
gtest_part "$TESTS_fin" first 120 "$FIRST"
TAGS=""
for pr in fp8_channel fp8_tensor fp8_block; do
  abba land fin "${pr}_f" --precision $pr --m 1,2,16
  TAGS="$TAGS ${pr}_f"
  echo "abba $pr $(el) s" >> "$W/info.txt"
done
for pr in bf16 w4a16; do
  abba land fin "${pr}_f" --precision $pr --m 1
  TAGS="$TAGS ${pr}_f"
  echo "abba $pr $(el) s" >> "$W/info.txt"
done
for pr in bf16 w4a16 w8a16; do
  [ $(el) -lt 170 ] && timeout 30 "$BIN_fin" bench --precision $pr --json "$W/bench_$pr.json" > "$W/bench_$pr.txt" 2>&1
done
carried_report
for t in $TAGS; do
  echo "== $t fin / land"
  abba_compare land fin "$t" 16
done
carried_pack

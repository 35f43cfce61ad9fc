#!/usr/bin/env bash
# v58 call 1 (written before a device was lent; ran on an nvidia-h100-x1): land = 792e8ae's release build (main, packed
# in v57 as build/carry/land.tgz), dir = the candidate branch cand/v58-direct-m1 (one token
# without align: the GEMVs take the token's top-k ids as their instances; planner.h,
# one_token_direct), packed as build/carry/dir.tgz.
#   carry: ["build/carry/land.tgz", "build/carry/dir.tgz"]
# 1. the cases the change touches first: the new one-token cases of every precision (skipped
#    and repeated ids, in place, fp16, partial tiles), the dense edge shapes, the integer edge
#    shapes on small_m, every CUDA-graph replay (M = 1 among them);
# 2. compute-sanitizer memcheck + racecheck at M = 1: int4 top-8 (gate-up GEMV + the int4
#    one-token down), FP8 block top-8 (the quantizers and fp8_gemv, down GEMV + combine),
#    bf16 top-1 (the down GEMV writing out's row);
# 3. ABBA land / dir at M = 1 (where it fires) and M = 2 (a control: align runs, only the
#    kernels' changed prologue differs), bf16 and w4a16, four rounds each;
# 4. the rest of the GPU suite in what is left of 570 s.
# Everything in $OUT/w1.tgz.
source scripts/carried_env.sh
carried_setup w1 land dir || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
FIRST='OneTokenWithoutAlign.*:*DenseLayer.EdgeShapes/*:Paths/QuantLayer.EdgeShapesAndFp16/small_m:*CudaGraphReplaysWithNewRouting/*'
gtest_part "$TESTS_dir" first 240 "$FIRST"
sanitize "$BIN_dir" int4 check --precision w4a16 --shape qwen3_30b_a3b_tp1 --m 1
sanitize "$BIN_dir" fp8 check --precision fp8_block --shape deepseek_v3_tp8 --m 1
sanitize "$BIN_dir" top1 check --precision bf16 --shape llama4_scout_tp8 --m 1
TAGS=""
for pr in bf16 w4a16; do
  abba land dir "${pr}_a" --precision $pr --m 1,2
  abba land dir "${pr}_b" --precision $pr --m 1,2
  TAGS="$TAGS ${pr}_a ${pr}_b"
  echo "abba $pr $(el) s" >> "$W/info.txt"
done
left=$((570 - $(el)))
[ "$left" -gt 30 ] && gtest_part "$TESTS_dir" rest "$left" "-$FIRST"
cat "$W/info.txt"
for f in "$W"/ctest_*.txt; do echo "== $f"; grep -E "^\[  FAILED|^\[  PASSED|tests ran|FAIL:" "$f" | head -12; done
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|result" "$W"/memcheck_*.txt "$W"/racecheck_*.txt | head
for t in $TAGS; do
  echo "== $t dir / land"
  abba_compare land dir "$t" 10
done
carried_pack

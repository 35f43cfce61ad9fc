#!/usr/bin/env bash
# v58 call 1 (written without a GPU; not run yet): land = 792e8ae's release build (main, packed
# in v57 as build/carry/land.tgz), dir = the candidate branch cand/v58-direct-m1 (one token
# without align: the GEMVs take the token's top-k ids as their instances; planner.h,
# one_token_direct), packed as build/carry/dir.tgz.
#   carry: ["build/carry/land.tgz", "build/carry/dir.tgz"]
# 1. the cases the change touches: the new one-token cases of every precision (skipped and
#    repeated ids, in place, fp16, partial tiles), the dense and integer edge shapes, FP8's
#    partial blocks, every CUDA-graph replay (M = 1 among them), fp16 / weight on input;
# 2. compute-sanitizer memcheck + racecheck at M = 1: int4 top-8 (gate-up GEMV + the int4
#    one-token down), FP8 block top-8 (the quantizers and fp8_gemv, down GEMV + combine),
#    bf16 top-1 (the down GEMV writing out's row);
# 3. ABBA land / dir at M = 1 (where it fires) and M = 2 (a control: align runs, only the
#    kernels' changed prologue and epilogue differ), every precision, two rounds each, bf16,
#    w4a16 and fp8_channel twice;
# 4. the rest of the GPU suite in what is left of 560 s.
# Everything in $OUT/w1.tgz.
source scripts/carried_env.sh
carried_setup w1 land dir || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
FIRST='OneTokenWithoutAlign.*:*DenseLayer.EdgeShapes/*:Paths/QuantLayer.EdgeShapesAndFp16/*:*Fp8Layer.PartialBlocksEdgesAndModes/*'
FIRST="$FIRST:*CudaGraphReplaysWithNewRouting/*:*DenseLayer.Fp16ActivationsAndWeightOnInput/*"
gtest_part "$TESTS_dir" first 240 "$FIRST"
sanitize "$BIN_dir" int4 check --precision w4a16 --shape qwen3_30b_a3b_tp1 --m 1
sanitize "$BIN_dir" fp8 check --precision fp8_block --shape deepseek_v3_tp8 --m 1
sanitize "$BIN_dir" top1 check --precision bf16 --shape llama4_scout_tp8 --m 1
TAGS=""
for pr in bf16 w4a16 fp8_channel w8a16 fp8_block fp8_tensor; do
  abba land dir "${pr}_a" --precision $pr --m 1,2
  TAGS="$TAGS ${pr}_a"
  case $pr in bf16|w4a16|fp8_channel) abba land dir "${pr}_b" --precision $pr --m 1,2; TAGS="$TAGS ${pr}_b" ;; esac
  echo "abba $pr $(el) s" >> "$W/info.txt"
done
left=$((560 - $(el)))
[ "$left" -gt 30 ] && gtest_part "$TESTS_dir" rest "$left" "-$FIRST"
cat "$W/info.txt"
for f in "$W"/ctest_*.txt; do echo "== $f"; grep -E "^\[  FAILED|^\[  PASSED|tests ran|FAIL:" "$f" | head -12; done
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|result" "$W"/memcheck_*.txt "$W"/racecheck_*.txt | head
for t in $TAGS; do
  echo "== $t dir / land"
  abba_compare land dir "$t" 10
done
carried_pack

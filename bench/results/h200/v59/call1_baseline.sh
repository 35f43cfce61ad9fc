#!/usr/bin/env bash
# v59 call 1: main (1dc7927, v58's landed code, never run as itself) and land (a261e3d's code,
# v57's pack: main before v58), release builds made on the build machine.
#   carry: ["build/carry/land.tgz", "build/carry/main.tgz"]
# 1. main's bench of every precision at every M of models.json, with its rooflines, the cuBLAS
#    peer and the vLLM column (the re-baseline the issues' targets are read from);
# 2. ABBA land / main: FP8 at M = 1, 2, 16 (FP8 keeps align: must be unchanged), bf16 and
#    w4a16 at M = 1 (v58's gain);
# 3. compute-sanitizer memcheck + racecheck at M = 1 on w4a16 (Qwen3) and w8a16 (Scout, top-1);
# 4. ncu per-SASS samples of Qwen3's M = 1 GEMVs (w4a16, bf16);
# 5. the GPU suite on main: the cases v58 touched (FP8, one token, graphs) first, the rest in
#    what is left of 480 s.
# Everything in $OUT/w1.tgz; the bench text files also as $OUT/bench_PRECISION.txt.
source scripts/carried_env.sh
carried_setup w1 land main || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
bench_each "$BIN_main" bf16 w4a16 w8a16 fp8_channel fp8_tensor fp8_block
for pr in fp8_channel fp8_tensor fp8_block; do abba_tagged land main "${pr}_f" --precision $pr --m 1,2,16; done
for pr in bf16 w4a16 w8a16; do abba_tagged land main "${pr}_f" --precision $pr --m 1; done
sanitize "$BIN_main" int4 check --precision w4a16 --shape qwen3_30b_a3b_tp1 --m 1
sanitize "$BIN_main" top1 check --precision w8a16 --shape llama4_scout_tp8 --m 1
# per-SASS stall samples of the M = 1 GEMVs (gate-up, then down), Qwen3, w4a16 and bf16
ncu_sass "$BIN_main" w4q3 "wna16_gemv" bench --shape qwen3_30b_a3b_tp1 --m 1 --precision w4a16 --seconds 0.001
ncu_sass "$BIN_main" bfq3 "gemv|one_token" bench --shape qwen3_30b_a3b_tp1 --m 1 --precision bf16 --seconds 0.001
FIRST='OneTokenWithoutAlign.*:*Fp8*:*CudaGraphReplaysWithNewRouting*:SmallMSplitK.*'
gtest_part "$TESTS_main" first 150 "$FIRST"
left=$((480 - $(el)))
[ "$left" -gt 30 ] && gtest_part "$TESTS_main" rest "$left" "-$FIRST"
carried_report
abba_report land main 16
carried_pack

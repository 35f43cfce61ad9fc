#!/usr/bin/env bash
# v67 call 1, two builds: land = main (f6ee7b4, with 6222603's fix of the FP8 one-token down's
# wait, which no GPU has run yet); fold = land and the intermediate's quantizer folded into the
# FP8 one-token down GEMV (each CTA quantizes the token's rows into shared memory; one launch
# fewer at M = 1):
# 1. land's FP8 few-token, one-token and small-M edge cases (v66's queued call 3);
# 2. fold's FP8 cases (the few-token test with its new one-token cases, the quantizer, the FP8
#    layer suites on small_m, the one-token tests), memcheck + racecheck on three M = 1 cases;
# 3. ABBA land / fold of fp8_channel, fp8_block, fp8_tensor at M = 1 (and M = 2 as a control:
#    unchanged path);
# 4. on an H200 only: land's bench of every precision (the issues' reports).
#   carry: ["build/carry/land.tgz", "build/carry/fold.tgz"]
# Run as `bash bench/results/h200/v67/call1_fold.sh` (W unset: the work folder is $OUT/w1).
source scripts/carried_env.sh
carried_setup "${W:-w1}" land fold || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_land" fix 90 'FewTokensFp8.*:OneTokenWithoutAlign.*:Paths/Fp8Layer.PartialBlocksEdgesAndModes/small_m'
gtest_part "$TESTS_fold" fold 150 'FewTokensFp8.*:OneTokenWithoutAlign.*:Fp8Quantize.*:Paths/Fp8Layer.*/small_m:SmallMSplitK.*'
sanitize "$BIN_fold" block check --precision fp8_block --shape deepseek_v3_tp8 --m 1
sanitize "$BIN_fold" tensor check --precision fp8_tensor --shape qwen3_30b_a3b_tp1 --m 1
sanitize "$BIN_fold" channel check --precision fp8_channel --shape qwen2_57b_a14b_tp4 --m 1
for pr in fp8_channel fp8_block fp8_tensor; do
  abba_tagged land fold $pr --precision $pr --m 1,2
done
if nvidia-smi -L | grep -q H200; then
  bench_each "$BIN_land" bf16 fp8_tensor fp8_channel fp8_block w4a16 w4a16_awq w8a16
fi
carried_report
abba_report land fold 12 | awk 'NF >= 6 {print substr($2,1,10), $3, $4, $5, $6} NF < 6' | paste -sd' ' | fold -w 240
for pr in bf16 fp8_tensor fp8_channel fp8_block w4a16 w8a16; do
  [ -f "$W/bench_$pr.txt" ] || continue
  echo "== $pr"; grep -E "^(mixtral|qwen|deepseek|llama)" "$W/bench_$pr.txt" | awk '$9 != "-" {print $1, $2, $4, $8, $10}' | paste -sd' ' | fold -w 240
done
carried_pack

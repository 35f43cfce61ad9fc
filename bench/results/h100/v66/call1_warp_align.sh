#!/usr/bin/env bash
# v66 call 1, three builds: land = main's kernels (6f23c80); wa = align by one warp up to 32
# pairs (align_warp.cuh: a bitonic sort over the lanes, no barriers) and, on the small-M FP8
# path, that table written by one more CTA of x's quantizer launch (no align launch); ot = wa
# and FP8's one-token down GEMV with the combine folded in (M = 1, top-4 to 8):
# 1. ot's align, quantizer, FP8 / dense forced-path, few-token and split-K cases;
# 2. compute-sanitizer memcheck + racecheck on ot: FP8 block M = 1 (DeepSeek-V3: the table's
#    CTA, the one-token down), bf16 M = 3 (Qwen2: the warp align kernel), FP8 channel M = 4
#    top-1 (Scout: the table's CTA with the down GEMV writing out);
# 3. ABBA land / wa: fp8_channel, fp8_block, fp8_tensor, bf16, w4a16 at M = 1, 2, 3, 4, 8, 16;
#    ABBA wa / ot: the three FP8 modes at M = 1.
#   carry: ["build/carry/land.tgz", "build/carry/wa.tgz", "build/carry/ot.tgz"]
# Run as `bash bench/results/h100/v66/call1_warp_align.sh` (W unset: the work folder is $OUT/w1).
source scripts/carried_env.sh
carried_setup "${W:-w1}" land wa ot || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_ot" cases 200 'AlignTokens.*:Fp8Quantize.*:Paths/Fp8Layer.*:Paths/DenseLayer.*:OneTokenWithoutAlign.*:FewTokens*:SmallMSplitK.*'
sanitize "$BIN_ot" fp8 check --precision fp8_block --shape deepseek_v3_tp8 --m 1
sanitize "$BIN_ot" bf16 check --precision bf16 --shape qwen2_57b_a14b_tp4 --m 3
sanitize "$BIN_ot" top1 check --precision fp8_channel --shape llama4_scout_tp8 --m 4
for pr in fp8_channel fp8_block fp8_tensor bf16 w4a16; do
  abba_tagged land wa $pr --precision $pr --m 1,2,3,4,8,16
done
T1="$TAGS"
TAGS=""
for pr in fp8_channel fp8_block fp8_tensor; do
  abba_tagged wa ot ot_$pr --precision $pr --m 1
done
T2="$TAGS"
carried_report
TAGS="$T1"
abba_report land wa 31 | awk 'NF >= 6 {print substr($2,1,10), $3, $4, $5, $6} NF < 6' | paste -sd' ' | fold -w 240
TAGS="$T2"
abba_report wa ot 6 | awk 'NF >= 6 {print substr($2,1,10), $3, $4, $5, $6} NF < 6' | paste -sd' ' | fold -w 240
carried_pack

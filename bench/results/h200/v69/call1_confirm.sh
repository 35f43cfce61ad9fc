#!/usr/bin/env bash
# v69 call 1. Builds (release, packed as scripts/carried_env.sh expects):
#   mend = 6b56e16 (before v68's gate-up split rules), cand = main 58186b2 (the rules),
#   twin = cand with fp8.cu's weight_scale reduced to its reachable per-tensor / per-row cases
#          (its block case was a second copy of weight_scale_rows' address, never called),
#   few  = cand with FP8's one-token down GEMV for 2 to 4 tokens (no intermediate quantizer,
#          no combine there; branch cand/v69-few-tokens).
# 1. few's and twin's FP8 cases, few's sanitizers at M = 3; 2. ABBA cand / few at M = 1-4
# (M = 1: the same kernels, a control); 3. ABBA mend / cand where the rules change (fp8_channel,
# fp8_tensor, bf16 at M <= 32); 4. ABBA cand / twin (per-channel / per-tensor GEMVs, M <= 16);
# 5. time left: the fp8_block gate-up split sweep; on an H200, cand's bench of every precision.
#   carry: ["build/carry/mend.tgz", "build/carry/cand.tgz", "build/carry/twin.tgz", "build/carry/few.tgz"]
# Run as `bash bench/results/h200/v69/call1_confirm.sh` (W unset: the work folder is $OUT/w1).
source scripts/carried_env.sh
carried_setup "${W:-w1}" mend cand twin few || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_few" few 150 'FewTokensFp8.*:OneTokenWithoutAlign.*:Paths/Fp8Layer.*/small_m:SmallMSplitK.*'
gtest_part "$TESTS_twin" twin 60 'Paths/Fp8Layer.EveryScalingModeOnBenchShapes/small_m:FewTokensFp8.*'
sanitize "$BIN_few" few_block check --precision fp8_block --shape deepseek_v3_tp8 --m 3
sanitize "$BIN_few" few_channel check --precision fp8_channel --shape qwen3_30b_a3b_tp1 --m 4
abba cand few fchannel --precision fp8_channel --m 1,2,3,4
abba cand few fblock --precision fp8_block --m 1,2,3,4
echo "abba few $(el) s" >> "$W/info.txt"
abba_tagged mend cand channel --precision fp8_channel --m 1,2,4,8,16,32
abba_tagged mend cand bf16 --precision bf16 --m 1,2,4,8,16,32
abba_tagged mend cand tensor --precision fp8_tensor --m 1,2,4,8,16,32
abba cand twin twch --precision fp8_channel --m 1,2,4,8,16
abba cand twin twte --precision fp8_tensor --m 1,2,4,8,16
echo "abba twin $(el) s" >> "$W/info.txt"
if [ "$(el)" -lt 400 ]; then
  for g in 1 2 4 8; do
    timeout 40 "$BIN_cand" bench --precision fp8_block --m 1,2,4,8,16,32 --split-k "$g,1" > "$W/sweep_fp8_block_${g}_1.txt" 2>&1
  done
  timeout 40 "$BIN_cand" bench --precision fp8_block --m 1,2,4,8,16,32 > "$W/sweep_fp8_block_auto.txt" 2>&1
  echo "sweep fp8_block $(el) s" >> "$W/info.txt"
fi
if nvidia-smi -L | grep -q H200 && [ "$(el)" -lt 470 ]; then
  bench_each "$BIN_few" bf16 fp8_channel fp8_tensor fp8_block w4a16
fi
carried_report
for t in fchannel fblock; do echo "== $t few / cand"; abba_compare cand few $t 20; done
abba_report mend cand 8
echo "== twch twin / cand"; abba_compare cand twin twch 8
echo "== twte twin / cand"; abba_compare cand twin twte 8
python3 bench/results/h200/v68/sweep_report.py "$W" fp8_block | tail -34
carried_pack

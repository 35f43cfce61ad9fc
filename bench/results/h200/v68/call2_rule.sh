#!/usr/bin/env bash
# v68 call 2: cand = mend (call 1) plus (a) the FP8 gate-up GEMV split at least 2 from K = 3584
# (kFp8GateUpSplitRule, from call 1's sweep) and (b) the hoist only in the one-token block
# kernel (call 1: M = 1 0.97-0.99, the general down kernels 1.01 slower at two points).
# (c) the dense gate-up GEMV split at least 2 from K = 2048 (kDenseGateUpSplitRule, the same
# sweep's bf16 half). 1. cand's FP8 and split cases; 2. ABBA mend / cand of fp8_channel,
# fp8_tensor and bf16 at M <= 32 (the rules) and fp8_block at M <= 4 (the hoist; its rule is
# unchanged); 3. a gate-up split
# sweep of fp8_block (G = 1-8, D = 1 or 2; its rule was not swept in call 1); 4. on an H200,
# cand's bench of the FP8 precisions.
#   carry: ["build/carry/mend.tgz", "build/carry/cand.tgz"]
# Run as `bash bench/results/h200/v68/call2_rule.sh` (W unset: the work folder is $OUT/w2).
source scripts/carried_env.sh
carried_setup "${W:-w2}" mend cand || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_cand" cand 150 'SmallMSplitK.*:Paths/Fp8Layer.*/small_m:FewTokensFp8.*:OneTokenWithoutAlign.*:Paths/DenseLayer.EdgeShapes/small_m'
abba_tagged mend cand channel --precision fp8_channel --m 1,2,4,8,16,32
abba_tagged mend cand tensor --precision fp8_tensor --m 1,2,4,8,16,32
abba_tagged mend cand block --precision fp8_block --m 1,2,4
abba_tagged mend cand bf16 --precision bf16 --m 1,2,4,8,16,32
if [ "$(el)" -lt 300 ]; then
  for g in 1 2 4 8; do
    for d in 1 2; do
      timeout 60 "$BIN_cand" bench --precision fp8_block --m 1,2,4,8,16,32 --split-k "$g,$d" > "$W/sweep_fp8_block_${g}_$d.txt" 2>&1
    done
  done
  timeout 60 "$BIN_cand" bench --precision fp8_block --m 1,2,4,8,16,32 > "$W/sweep_fp8_block_auto.txt" 2>&1
  echo "sweep fp8_block $(el) s" >> "$W/info.txt"
fi
if nvidia-smi -L | grep -q H200 && [ "$(el)" -lt 420 ]; then bench_each "$BIN_cand" fp8_channel fp8_tensor fp8_block; fi
carried_report
abba_report mend cand 8
python3 bench/results/h200/v68/sweep_report.py "$W" fp8_block | tail -32
carried_pack

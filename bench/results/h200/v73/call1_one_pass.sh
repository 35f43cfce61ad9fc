#!/usr/bin/env bash
# v73 call 1: op1 = main72 (74172ce) with the one-pass per-tensor quantizer
# (launch_fp8_quantize_one_pass: a dynamic per-tensor scale's amax and codes in one
# cooperative launch, the rows held in shared memory across a grid barrier; no amax pass, and
# on the grouped path no gated_act writing the activation in bf16 first). 1. op1's FP8 cases
# (the new bitwise checks against the reference and against the two-pass launches, every FP8
# layer case); 2. memcheck and racecheck of a per-tensor layer that takes it for both tensors;
# 3. ABBA main72 / op1 of fp8_tensor at every M, and of fp8_channel at a few (unchanged code
# there: the noise floor).
#   carry: ["build/carry/main72.tgz", "build/carry/op1.tgz"]
# Run as `bash bench/results/h200/v73/call1_one_pass.sh` (W unset: the work folder is $OUT/w1).
source scripts/carried_env.sh
carried_setup "${W:-w1}" main72 op1 || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_op1" fp8 300 '*Fp8*'
echo "tests $(el) s" >> "$W/info.txt"
sanitize "$BIN_op1" op1 check --precision fp8_tensor --shape qwen3_30b_a3b_tp1 --m 64
abba_tagged main72 op1 tensor --precision fp8_tensor
abba_tagged main72 op1 channel --precision fp8_channel --m 16,256,1024
carried_report
abba_report main72 op1 40
carried_pack

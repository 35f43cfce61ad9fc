#!/usr/bin/env bash
# v73 call 2: op2 = main72 (74172ce) with the one-pass per-tensor quantizer, its warps on units
# (a row's segment of at most 256 vectors: call 1's op1, a warp per row, lost 2-5% where a few
# long rows left most warps idle: Mixtral M = 1-64, DeepSeek-V3 M = 8-32)
# (launch_fp8_quantize_one_pass: a dynamic per-tensor scale's amax and codes in one
# cooperative launch, the rows held in shared memory across a grid barrier; no amax pass, and
# on the grouped path no gated_act writing the activation in bf16 first). 1. op2's FP8 cases
# (the new bitwise checks against the reference and against the two-pass launches, every FP8
# layer case); 2. memcheck and racecheck of a per-tensor layer that takes it for both tensors,
# and of DeepSeek-V3 M = 8 (x's rows in four units each); 3. ABBA main72 / op2 of fp8_tensor
# at every M (call 1's fp8_channel ABBA, whose code did not change, was within 0.997-1.004).
#   carry: ["build/carry/main72.tgz", "build/carry/op2.tgz"]
# Run as `bash bench/results/h200/v73/call2_units.sh` (W unset: the work folder is $OUT/w2).
source scripts/carried_env.sh
carried_setup "${W:-w2}" main72 op2 || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_op2" fp8 300 '*Fp8*'
echo "tests $(el) s" >> "$W/info.txt"
sanitize "$BIN_op2" op2 check --precision fp8_tensor --shape qwen3_30b_a3b_tp1 --m 64
sanitize "$BIN_op2" op2_ds8 check --precision fp8_tensor --shape deepseek_v3_tp8 --m 8
abba_tagged main72 op2 tensor --precision fp8_tensor
carried_report
abba_report main72 op2 40
carried_pack

#!/usr/bin/env bash
# v74 call 1: hyb = main73 with the one-pass per-tensor quantizer taking tensors past its
# shared memory (each CTA holds its first units and reads the others twice, where it holds at
# least a third: Qwen3 / Qwen2 TP4's activation at M = 4096, Mixtral's at 1024, x of DeepSeek-V3
# from M = 2048, of Qwen2 TP4 / Scout / Mixtral at 4096). 1. hyb's FP8 and split-K cases, the
# quantizer's cases under memcheck and racecheck; 2. ABBA main73 / hyb of fp8_tensor at every M.
#   Builds: main73 = d9ce081; hyb = this session's tree (packed as v64's results README says).
#   carry: ["build/carry/main73.tgz", "build/carry/hyb.tgz"]
# Run as `bash bench/results/h200/v74/call1_hybrid.sh` (W unset: the work folder is $OUT/w1).
source scripts/carried_env.sh
carried_setup "${W:-w1}" main73 hyb || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_hyb" fp8 200 '*Fp8*:SmallMSplitK.*'
SANITIZE_S=120 sanitize "$TESTS_hyb" quantize --gtest_filter='Fp8Quantize.*'
abba_tagged main73 hyb tensor --precision fp8_tensor
carried_report
abba_report main73 hyb 40
carried_pack

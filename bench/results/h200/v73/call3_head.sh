#!/usr/bin/env bash
# v73 call 3: main73 = 0f9f7ef (the one-pass per-tensor quantizer landed). 1. its whole GPU
# suite, the FP8 cases and the split-K ones first (the part the change touches: the session's
# device time may cut the rest); 2. on an H200 only, its bench of every precision (the
# issues' figures; v67's call 1 is the last H200 baseline).
#   carry: ["build/carry/main73.tgz"]
# Run as `bash bench/results/h200/v73/call3_head.sh` (W unset: the work folder is $OUT/w3).
source scripts/carried_env.sh
carried_setup "${W:-w3}" main73 || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_main73" fp8 200 '*Fp8*:SmallMSplitK.*'
echo "fp8 part $(el) s" >> "$W/info.txt"
gtest_part "$TESTS_main73" rest 300 '-*Fp8*:SmallMSplitK.*'
echo "rest $(el) s" >> "$W/info.txt"
if nvidia-smi -L | grep -q H200; then
  bench_each "$BIN_main73" bf16 fp8_tensor fp8_channel fp8_block w4a16 w4a16_awq w8a16
fi
carried_report
carried_pack

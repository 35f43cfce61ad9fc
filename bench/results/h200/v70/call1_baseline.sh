#!/usr/bin/env bash
# v70 call 1: main's (10676a9) bench of every precision at every M of models.json (the issues'
# figures; v67's call 1 was the last H200 baseline), then the whole GPU test suite.
#   carry: ["build/carry/main.tgz"]
# Run as `bash bench/results/h200/v70/call1_baseline.sh` (W unset: the work folder is $OUT/w1).
source scripts/carried_env.sh
carried_setup "${W:-w1}" main || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
bench_each "$BIN_main" bf16 fp8_tensor fp8_channel fp8_block w4a16 w4a16_awq w8a16
gtest_part "$TESTS_main" all 420 '*'
carried_report
for p in bf16 fp8_channel fp8_block w4a16; do grep -E "^shape|^(qwen3|mixtral).* (1|4|64|4096) " "$W/bench_$p.txt" | head -12; done
carried_pack

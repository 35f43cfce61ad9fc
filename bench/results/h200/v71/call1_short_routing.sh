#!/usr/bin/env bash
# v71 call 1: v70's call 7 and call 8 in one call. On an H200 only: main's bench of every
# precision (the issues' figures; v67 was the last H200 run). On any GPU: v70's queued
# short-rows candidate (short = main with bench/results/h200/v70/short_rows_candidate.patch):
# its FP8 cases, each kernel alone beside main's, ABBA on fp8_channel at M = 32-2048; and the
# first run of `bench --stage routing` (TARGETS.md's routing + align <= 5 us row).
#   carry: ["build/carry/main.tgz", "build/carry/short.tgz"]
# Run as `bash bench/results/h200/v71/call1_short_routing.sh` (W unset: the work folder is $OUT/w1).
source scripts/carried_env.sh
carried_setup "${W:-w1}" main short || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
timeout 90 "$BIN_main" bench --stage routing --m 1,4,16,64,256,1024,4096 > "$W/bench_routing.txt" 2>&1
echo "routing stage rc=$? $(el) s" >> "$W/info.txt"
if nvidia-smi -L | grep -q H200; then
  bench_each "$BIN_main" bf16 fp8_tensor fp8_channel fp8_block w4a16 w4a16_awq w8a16
fi
gtest_part "$TESTS_short" short 100 'Fp8Quantize.*:Paths/Fp8Layer.PartialBlocksEdgesAndModes/*:Paths/Fp8Layer.EveryScalingModeOnBenchShapes/grouped_swapped'
profile_builds act fp8_channel "llama4_scout_tp8:1024 llama4_scout_tp8:512 qwen3_30b_a3b_tp1:128 deepseek_v3_tp8:64" main short \
  > "$W/profile_act_compare.txt"
abba_tagged main short chan --precision fp8_channel --m 32,64,128,256,512,1024,2048
carried_report
cat "$W/bench_routing.txt"
cat "$W/profile_act_compare.txt"
abba_report main short 36
carried_pack

#!/usr/bin/env bash
# v70's next candidate, queued for the next session (not run): short = main with
# short_rows_candidate.patch (the per-row FP8 quantizer takes a warp per row from 512 rows of
# fewer than 256 vectors, x's scatter excepted: v70 call 5's one gain, Scout M = 1024
# 0.970-0.979, with the points where only that quantizer changed neutral). 1. short's FP8
# cases; 2. each kernel alone beside main's (profile_builds); 3. ABBA main / short on
# fp8_channel at M = 32-2048 (the rule's rows are pairs: M x topk); 4. main's `bench --stage
# routing` (new in v70, never run: the router and align, TARGETS.md's 5 us row).
#   carry: ["build/carry/main.tgz", "build/carry/short.tgz"]
# Build short: git apply bench/results/h200/v70/short_rows_candidate.patch, the release build,
# the pack command of the v64 results README; then git checkout src/kernels/fp8.cu.
# Run as `bash bench/results/h200/v70/call8_short_rows.sh` (W unset: the work folder is $OUT/w8).
source scripts/carried_env.sh
carried_setup "${W:-w8}" main short || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_short" short 100 'Fp8Quantize.*:Paths/Fp8Layer.PartialBlocksEdgesAndModes/*:Paths/Fp8Layer.EveryScalingModeOnBenchShapes/grouped_swapped'
profile_builds act fp8_channel "llama4_scout_tp8:1024 llama4_scout_tp8:512 qwen3_30b_a3b_tp1:128 deepseek_v3_tp8:64" main short \
  > "$W/profile_act_compare.txt"
abba_tagged main short chan --precision fp8_channel --m 32,64,128,256,512,1024,2048
# bench's routing stage (v70, not yet run on a GPU): the router and align against TARGETS.md's 5 us
timeout 90 "$BIN_main" bench --stage routing --m 1,4,16,64,256,1024,4096 > "$W/bench_routing.txt" 2>&1
echo "routing stage rc=$? $(el) s" >> "$W/info.txt"
carried_report
cat "$W/profile_act_compare.txt"
abba_report main short 36
cat "$W/bench_routing.txt"
carried_pack

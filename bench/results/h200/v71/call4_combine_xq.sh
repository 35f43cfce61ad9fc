#!/usr/bin/env bash
# v71 call 4: two candidates on al, and the whole GPU suite. cb = al + local_experts_of
# (device_util.cuh): the combine loads every slot's id, row and weight at once, then the map
# entries (align on the same helper). xq = cb + TokenPairRows (fp8.cu): x's FP8 quantizer
# holds its token's pair rows in registers, read once, not once per stored vector.
# 1. each kernel alone (profile_builds al / cb / xq, fp8_channel Qwen3 / Qwen2 TP4 M = 1024,
# Qwen3 M = 256); 2. ABBA al / cb (bf16, fp8_channel) and cb / xq (fp8_channel) at M =
# 64-4096; 3. xq's whole GPU suite (every change of the session); on an H200 only, al's
# bench of every precision first (al is main's code at the call: the issues' figures).
#   carry: ["build/carry/al.tgz", "build/carry/cb.tgz", "build/carry/xq.tgz"]
# Run as `bash bench/results/h200/v71/call4_combine_xq.sh` (W unset: the work folder is $OUT/w4).
source scripts/carried_env.sh
carried_setup "${W:-w4}" al cb xq || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
if nvidia-smi -L | grep -q H200; then bench_each "$BIN_al" bf16 fp8_tensor fp8_channel fp8_block w4a16 w4a16_awq w8a16; fi
profile_builds glue fp8_channel "qwen3_30b_a3b_tp1:1024 qwen2_57b_a14b_tp4:1024 qwen3_30b_a3b_tp1:256" al cb xq \
  > "$W/profile_glue_compare.txt"
abba_tagged al cb bf16 --precision bf16 --m 64,256,1024,4096
abba_tagged al cb chan --precision fp8_channel --m 64,256,1024,4096
abba_tagged cb xq xchan --precision fp8_channel --m 64,256,1024,4096
gtest_part "$TESTS_xq" all 340 '*'
carried_report
grep -E "quantize|combine|sum of|==" "$W/profile_glue_compare.txt"
# the ratios outside 0.995-1.004 (every line is in the packed files)
for t in bf16 chan; do echo "== $t cb / al"; abba_compare al cb $t 20; done | grep -vE " 0\.99[5-9] | 1\.00[0-4] "
echo "== xchan xq / cb"; abba_compare cb xq xchan 20 | grep -vE " 0\.99[5-9] | 1\.00[0-4] "
carried_pack

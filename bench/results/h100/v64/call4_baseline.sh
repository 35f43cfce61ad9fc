#!/usr/bin/env bash
# v64 call 4, main's build (land = 7325020: v63's several-tile down GEMV and WarpPlace::place,
# neither run on an H200 yet, the latter on no GPU). Asked for as nvidia-h200 for the issues'
# report and run on an H100; the next H200 runs it as it is:
# 1. the integer cases (the several-tile test among them);
# 2. every precision's bench at the shapes file's batch sizes (the issues' reports; the vLLM
#    column is the H200's);
# 3. the rest of the GPU suite in what is left of 300 s.
#   carry: ["build/carry/land.tgz"]
source scripts/carried_env.sh
carried_setup "${W:-w1}" land || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
INT='Paths/QuantLayer.*/small_m:QuantLayerAuto.*:OneTokenWithoutAlign.*:OneTokenInt4Layer.*:SmallMSplitK.ForcedTilesPerWarpMatchTheReference'
gtest_part "$TESTS_land" int 120 "$INT"
bench_each "$BIN_land" bf16 fp8_tensor fp8_channel fp8_block w4a16 w4a16_awq w8a16
left=$((300 - $(el)))
[ "$left" -gt 30 ] && gtest_part "$TESTS_land" rest "$left" "-$INT"
carried_report
for pr in bf16 fp8_tensor fp8_channel fp8_block w4a16 w8a16; do
  echo "== $pr"; grep -E "^(mixtral|qwen|deepseek|llama)" "$W/bench_$pr.txt" | awk '$9 != "-" {print $1, $2, $4, $8, $10}' | paste -sd' ' | fold -w 240
done
carried_pack

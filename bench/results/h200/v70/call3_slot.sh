#!/usr/bin/env bash
# v70 call 3: slot = main with the FP8 quantizers' scale-slot lookups (kE4M3Grouped: an expert
# search of 3-8 dependent loads per stored scale) made while the row's first loads are in
# flight, not after its amax (rows kernel) or before its loads (spans kernel). 1. slot's FP8
# quantizer and grouped-layer cases, memcheck; 2. ABBA main / slot at the grouped points (M =
# 32-4096) of fp8_channel, fp8_tensor, fp8_block; 3. on an H200, main's bench of every precision.
#   carry: ["build/carry/main.tgz", "build/carry/slot.tgz"]
# Run as `bash bench/results/h200/v70/call3_slot.sh` (W unset: the work folder is $OUT/w3).
source scripts/carried_env.sh
carried_setup "${W:-w3}" main slot || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_slot" slot 150 'Fp8Quantize.*:Fp8LayerAuto.Gemm1GathersXCodesByToken:Paths/Fp8Layer.PartialBlocksEdgesAndModes/grouped_*:Paths/Fp8Layer.CudaGraphReplaysWithNewRouting/grouped_*:Paths/Fp8Layer.EveryScalingModeOnBenchShapes/grouped_gemm'
sanitize "$BIN_slot" slot check --precision fp8_channel --shape qwen3_30b_a3b_tp1 --m 64
abba_tagged main slot channel --precision fp8_channel --m 32,64,256,1024,4096
abba_tagged main slot tensor --precision fp8_tensor --m 32,64,256,1024,4096
abba_tagged main slot block --precision fp8_block --m 32,64,256,1024,4096
if nvidia-smi -L | grep -q H200 && [ "$(el)" -lt 400 ]; then
  bench_each "$BIN_main" bf16 fp8_tensor fp8_channel fp8_block w4a16 w4a16_awq w8a16
fi
carried_report
abba_report main slot 26
carried_pack

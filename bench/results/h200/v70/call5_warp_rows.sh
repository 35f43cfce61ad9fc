#!/usr/bin/env bash
# v70 call 5, two candidates from call 4's ncu (mid-M FP8 glue issue- or latency-bound):
#  - wr256 / wr512: the per-row FP8 quantizer takes a warp per row, not a CTA, from 256 rows of
#    at most 256 / 512 vectors (main: a CTA per row up to 1056 rows; Qwen3 M = 1024's x
#    quantizer, 1 vector per thread, 5.1M instructions, 11.6 us for 4.3 MB); only per-row
#    (fp8_channel) scales take that kernel;
#  - comb: the combine's rows as 32-bit ints and __launch_bounds__(256, 8) (main: 42 registers,
#    6 CTAs per SM, Qwen3 M = 1024's 1024 CTAs in two waves).
# Their test subsets; ABBA main / each on the points they touch.
#   carry: ["build/carry/main.tgz", "build/carry/wr256.tgz", "build/carry/wr512.tgz", "build/carry/comb.tgz"]
# Run as `bash bench/results/h200/v70/call5_warp_rows.sh` (W unset: the work folder is $OUT/w5).
source scripts/carried_env.sh
carried_setup "${W:-w5}" main wr256 wr512 comb || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_wr512" wr512 100 'Fp8Quantize.*:Paths/Fp8Layer.PartialBlocksEdgesAndModes/grouped_*:Paths/Fp8Layer.EveryScalingModeOnBenchShapes/grouped_gemm'
gtest_part "$TESTS_comb" comb 100 'Paths/DenseLayer.EdgeShapes/*:Paths/Fp8Layer.CudaGraphReplaysWithNewRouting/*:DenseLayerAuto.BenchShapesLargeBatch'
abba_tagged main wr256 w256 --precision fp8_channel --m 64,256,512,1024,2048
abba_tagged main wr512 w512 --precision fp8_channel --m 64,256,512,1024,2048
abba main comb cbf16 --precision bf16 --m 64,256,1024,4096
abba main comb cfp8 --precision fp8_channel --m 64,256,1024,4096
echo "abba comb $(el) s" >> "$W/info.txt"
carried_report
echo "== w256 wr256 / main"; abba_compare main wr256 w256 27
echo "== w512 wr512 / main"; abba_compare main wr512 w512 27
echo "== cbf16 comb / main"; abba_compare main comb cbf16 21
echo "== cfp8 comb / main"; abba_compare main comb cfp8 21
carried_pack

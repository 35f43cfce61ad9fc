#!/usr/bin/env bash
# v75 call 4: split = main73 + the hybrid quantizer with the read-twice path its own
# instantiation (kReadTwice; the all-held kernels are main73's SASS instruction for
# instruction, cuobjdump). 1. split's quantizer and FP8 layer cases (grouped), memcheck of
# Fp8Quantize.* (racecheck left out: the session's device time); 2. ABBA main73 / split of
# fp8_tensor at every M.
#   carry: ["build/carry/main73.tgz", "build/carry/split.tgz"]
# Run as `bash bench/results/h200/v75/call4_split.sh` (W unset: the work folder is $OUT/w4).
source scripts/carried_env.sh
carried_setup "${W:-w4}" main73 split || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_split" fp8 150 'Fp8Quantize.*:Fp8LayerAuto.*:Paths/Fp8Layer.*/grouped_gemm'
SANITIZE_TOOLS=memcheck sanitize "$TESTS_split" quantize --gtest_filter='Fp8Quantize.*'
abba_tagged main73 split tensor --precision fp8_tensor
carried_report
abba_report main73 split 66
carried_pack

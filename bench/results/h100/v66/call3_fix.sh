#!/usr/bin/env bash
# v66 call 3: fix = the FP8 one-token down with its wait moved (a warp without an expert waits
# before the pass, the others in it: no load after a later wait, which the CPU's SASS check
# requires): the FP8 few-token and one-token cases, the FP8 edge cases on the small-M path.
#   carry: ["build/carry/fix.tgz"]
# Run as `bash bench/results/h100/v66/call3_fix.sh` (W unset: the work folder is $OUT/w3).
source scripts/carried_env.sh
carried_setup "${W:-w3}" fix || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_fix" cases 120 'FewTokensFp8.*:OneTokenWithoutAlign.*:Paths/Fp8Layer.PartialBlocksEdgesAndModes/small_m'
carried_report
carried_pack

#!/usr/bin/env bash
# v56 call 5 (fin3: run three times; the first two ran builds with the on-input case below): fin3 = fin with call 4's new EdgeShapesAndFp16 case fixed (its int8 weights had
# groups of 128 over K = 2880, which the checkpoint refuses: now groups of 64); the integer
# paths' edge cases again. $OUT/w5.tgz.
source scripts/carried_env.sh
carried_setup w5 fin3 || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_fin3" edge 120 'Paths/QuantLayer.EdgeShapesAndFp16/*'
cat "$W/info.txt"; grep -E "^\[  FAILED|^\[  PASSED|^\[       OK|Failure" "$W/ctest_edge.txt" | head -12
carried_pack

#!/usr/bin/env bash
# v62 call 4: the landed build (ex = 213a0f1's kernels): the whole GPU suite, then its w4a16
# and w8a16 bench at every M of models.json.
#   carry: ["build/carry/ex.tgz"]
source scripts/carried_env.sh
carried_setup w4 ex || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_ex" all 420 '*'
bench_each "$BIN_ex" w4a16 w8a16
carried_report
carried_pack

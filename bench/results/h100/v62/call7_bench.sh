#!/usr/bin/env bash
# v62 call 7: the landed build (ex2 = HEAD's kernels): its w4a16, w4a16_awq and w8a16 bench at
# every M of models.json.
#   carry: ["build/carry/ex2.tgz"]
source scripts/carried_env.sh
carried_setup w7 ex2 || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
bench_each "$BIN_ex2" w4a16 w4a16_awq w8a16
carried_report
carried_pack

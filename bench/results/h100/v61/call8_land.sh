#!/usr/bin/env bash
# v61 call 8: the build that lands (fin: l3t's kernel without the stamps, top-1 layers left to
# the GEMVs by the planner). Its one-token cases, memcheck and racecheck at Qwen3 and
# DeepSeek-V3 TP8 (M = 1), main / fin at M = 1 (ABBA, w4a16 GPTQ and AWQ, M = 1 and 2), fin's
# w4a16 bench at every M, then the rest of the GPU suite as time allows.
#   carry: ["build/carry/main.tgz", "build/carry/fin.tgz"]
source scripts/carried_env.sh
carried_setup w8 main fin || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
FIRST='OneTokenInt4Layer.*:OneTokenWithoutAlign.*:Planner*'
gtest_part "$TESTS_fin" first 120 "$FIRST"
sanitize "$BIN_fin" q3 check --precision w4a16 --shape qwen3_30b_a3b_tp1 --m 1
sanitize "$BIN_fin" ds check --precision w4a16 --shape deepseek_v3_tp8 --m 1
for pr in w4a16_a w4a16_b w4a16_awq_a; do abba_tagged main fin "$pr" --precision ${pr%_?} --m 1,2; done
bench_each "$BIN_fin" w4a16
left=$((520 - $(el)))
[ "$left" -gt 30 ] && gtest_part "$TESTS_fin" rest "$left" "-$FIRST"
carried_report
abba_report main fin 12
carried_pack

#!/usr/bin/env bash
# v56 call 4, the build to land (fin = main + GEMM1 of the mixed-input path reading x by token
# where 2I <= 512 and the experts average 32-255 rows: planner.h, kMixedGatherMinRows):
# 1. the integer paths' edge cases (the new x-by-token cases on every path), the mixed-path
#    cases and the auto cases;
# 2. ABBA land / fin, w4a16 and w8a16 auto, DeepSeek-V3 TP8 M = 256-4096 (where the rule
#    gathers or borders), and every shape at M = 1024 / 4096 (where it does not: same times).
# $OUT/w4.tgz.
source scripts/carried_env.sh
carried_setup w4 land fin || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_fin" fin 150 'Paths/QuantLayer.EdgeShapesAndFp16/*:Paths/QuantLayer.*/grouped_mixed:QuantLayerAuto.*'
abba land fin ds4 --precision w4a16 --shape deepseek_v3_tp8 --m 256,512,1024,2048,4096
abba land fin ds8 --precision w8a16 --shape deepseek_v3_tp8 --m 256,512,1024,2048,4096
abba land fin all4 --precision w4a16 --m 1024,4096
echo "abba $(el) s" >> "$W/info.txt"
cat "$W/info.txt"
for f in "$W"/ctest_*.txt; do echo "== $f"; grep -E "^\[  FAILED|^\[  PASSED|tests ran|Failure" "$f" | head -12; done
abba_compare land fin ds4 7
abba_compare land fin ds8 7
abba_compare land fin all4 12
carried_pack

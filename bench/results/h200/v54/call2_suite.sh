#!/usr/bin/env bash
# v54 call 2: the whole GPU suite on the landed build (build/carry/fin.tgz, fin/: HEAD with
# int4's eight token tiles, the consumers' first group once per block, one dispatch_act for
# the four activation switches), in four parts under timeouts; then ncu of the mixed-input
# GEMM (Mixtral M = 1024 w4a16, grouped_mixed): per-kernel times and the source counters of
# GEMM1 after v53's epilogue. Everything in $OUT/w2.tgz.
source scripts/carried_env.sh
carried_setup w2 fin || exit 1
T="$TESTS_fin"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
timeout 100 $T --gtest_filter='Paths/QuantLayer.*/grouped_mixed:*ActivationsAndWeightOnInput*' > "$W/ctest_mixed.txt" 2>&1
echo "mixed cases rc=$? $(el) s" >> "$W/info.txt"
timeout 150 $T --gtest_filter='Paths/QuantLayer.*/small_m:Paths/QuantLayer.*/grouped_gemm:Paths/QuantLayer.*/grouped_swapped:QuantPrepare.*:QuantLayerAuto.*' > "$W/ctest_int.txt" 2>&1
echo "integer rc=$? $(el) s" >> "$W/info.txt"
timeout 280 $T --gtest_filter='-Paths/QuantLayer.*:QuantPrepare.*:QuantLayerAuto.*:*ActivationsAndWeightOnInput*' > "$W/ctest_rest.txt" 2>&1
echo "rest rc=$? $(el) s" >> "$W/info.txt"
ncu_sass "$BIN_fin" gemms wna16_grouped bench --shape mixtral_8x7b_tp1 --m 1024 --precision w4a16 \
  --path grouped_mixed --seconds 0.001
cat "$W/info.txt"
for f in "$W"/ctest_*.txt; do echo "== $f"; grep -E "^\[  FAILED|^\[  PASSED|tests ran|Failure|Which is" "$f" | head -20; done
grep -E '"Duration"|"Elapsed Cycles"' "$W/gemms_details.csv" | cut -c1-160
carried_pack

#!/usr/bin/env bash
# v54 call 2: the whole GPU suite on the build to land (build/carry/fin.tgz, fin/: HEAD with
# int4's eight token tiles and mixed_half_batches.patch; rebuilt and packed as fin if call 1
# drops either), in three parts under timeouts; then ncu of the mixed-input
# GEMM (Mixtral M = 1024 w4a16, grouped_mixed): per-kernel times and the source counters of
# GEMM1 after v53's epilogue. Everything in $OUT/w2.tgz.
source scripts/carried_env.sh
carried_setup w2 fin || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_fin" mixed 100 'Paths/QuantLayer.*/grouped_mixed:*ActivationsAndWeightOnInput*'
gtest_part "$TESTS_fin" int 150 'Paths/QuantLayer.*/small_m:Paths/QuantLayer.*/grouped_gemm:Paths/QuantLayer.*/grouped_swapped:QuantPrepare.*:QuantLayerAuto.*'
gtest_part "$TESTS_fin" rest 280 '-Paths/QuantLayer.*:QuantPrepare.*:QuantLayerAuto.*:*ActivationsAndWeightOnInput*'
ncu_sass "$BIN_fin" gemms wna16_grouped bench --shape mixtral_8x7b_tp1 --m 1024 --precision w4a16 \
  --path grouped_mixed --seconds 0.001
cat "$W/info.txt"
for f in "$W"/ctest_*.txt; do echo "== $f"; grep -E "^\[  FAILED|^\[  PASSED|tests ran|Failure|Which is" "$f" | head -20; done
grep -E '"Duration"|"Elapsed Cycles"' "$W/gemms_details.csv" | cut -c1-160
carried_pack

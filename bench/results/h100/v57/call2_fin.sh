#!/usr/bin/env bash
# v57 call 2, the build to land (fin = otd with the rule of call 1's numbers: the integer
# one-token down GEMV for int4 only, where the down GEMV would not split K more ways than its
# warps; planner.h, one_token_down):
# 1. the integer edge cases on every path (the one-token cases now all int4), the small_m ones,
#    the dense edge shapes;
# 2. ABBA land / fin at M = 1 and 2, four rounds, w4a16 (GPTQ g128), w4a16_awq, w8a16 (now
#    unchanged: a control);
# 3. the rest of the GPU suite in what is left of 470 s.
# Everything in $OUT/w2.tgz.
source scripts/carried_env.sh
carried_setup w2 land fin || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
FIRST='Paths/QuantLayer.EdgeShapesAndFp16/*:Paths/QuantLayer.*/small_m:*DenseLayer.EdgeShapes/*'
gtest_part "$TESTS_fin" first 150 "$FIRST"
for pr in w4a16 w4a16_awq w8a16; do
  abba land fin "${pr}_a" --precision $pr --m 1,2
  abba land fin "${pr}_b" --precision $pr --m 1,2
  echo "abba $pr $(el) s" >> "$W/info.txt"
done
timeout 40 "$BIN_fin" bench --precision w4a16 --json "$W/bench_w4a16.json" > "$W/bench_w4a16.txt" 2>&1
left=$((470 - $(el)))
[ "$left" -gt 30 ] && gtest_part "$TESTS_fin" rest "$left" "-$FIRST"
cat "$W/info.txt"
for f in "$W"/ctest_*.txt; do echo "== $f"; grep -E "^\[  FAILED|^\[  PASSED|tests ran|FAIL:" "$f" | head -12; done
for pr in w4a16 w4a16_awq w8a16; do
  for t in a b; do for r in 1 2; do
    python3 scripts/bench_compare.py "$W/bench_${pr}_${t}_land_r$r.txt" "$W/bench_${pr}_${t}_fin_r$r.txt" | grep -E "  1 " | awk '{print $1, $2, $4, $5, $6}'
  done; done
done
carried_pack

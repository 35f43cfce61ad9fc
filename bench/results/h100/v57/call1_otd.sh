#!/usr/bin/env bash
# v57 call 1: land = a261e3d's release build (main), otd = main + the integer one-token down
# GEMV with the top-k combine folded in (launch_wna16_one_token_down; the dense one_token_down
# kernel on the same shared pieces, gemv::WarpPlace::init_one_token and gemv::OneTokenSums).
# 1. the cases the change touches: the integer edge cases on every path (the new one-token ones,
#    a261e3d's x-by-token ones), every small_m and grouped_mixed integer case, the dense edge
#    shapes (the dense one-token kernel's new form);
# 2. compute-sanitizer memcheck + racecheck on the one-token kernel (top-8 split 1, top-4 split 2);
# 3. ABBA land / otd at M = 1 (where it fires) and M = 2 (a control: unchanged), four rounds,
#    w4a16 (GPTQ), w4a16_awq, w8a16 and bf16;
# 4. the rest of the GPU suite in what is left of 560 s.
# Everything in $OUT/w1.tgz.
source scripts/carried_env.sh
carried_setup w1 land otd || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
FIRST='Paths/QuantLayer.EdgeShapesAndFp16/*:Paths/QuantLayer.*/small_m:Paths/QuantLayer.*/grouped_mixed:*DenseLayer.EdgeShapes/*'
gtest_part "$TESTS_otd" first 220 "$FIRST"
sanitize "$BIN_otd" top8 check --precision w4a16 --shape qwen3_30b_a3b_tp1 --m 1
sanitize "$BIN_otd" top4 check --precision w8a16 --E 16 --H 1024 --I 512 --topk 4 --m 1
for pr in w4a16 w4a16_awq w8a16 bf16; do
  abba land otd "${pr}_a" --precision $pr --m 1,2
  abba land otd "${pr}_b" --precision $pr --m 1,2
  echo "abba $pr $(el) s" >> "$W/info.txt"
done
left=$((560 - $(el)))
[ "$left" -gt 30 ] && gtest_part "$TESTS_otd" rest "$left" "-$FIRST"
cat "$W/info.txt"
for f in "$W"/ctest_*.txt; do echo "== $f"; grep -E "^\[  FAILED|^\[  PASSED|tests ran|FAIL:" "$f" | head -12; done
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|result" "$W"/memcheck_*.txt "$W"/racecheck_*.txt | head
for pr in w4a16 w4a16_awq w8a16 bf16; do
  echo "== $pr otd / land"
  abba_compare land otd "${pr}_a" 10
  abba_compare land otd "${pr}_b" 10
done
carried_pack

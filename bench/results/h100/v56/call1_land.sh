#!/usr/bin/env bash
# v56 call 1, on main's build (build/carry/land.tgz = 42ee22c's code, revision 6c8b564; the planner's
# integer rule kIntegerPathRule {64, 24, 64}: wna16_gemv below 64 rows per active expert, 24 at
# I <= 256, the mixed-input GEMM above):
# 1. the auto cases under the rule and the integer paths' cases;
# 2. the integer crossovers on this GPU: w4a16 / w8a16 under auto, the GEMV (small_m), the
#    mixed-input GEMM (grouped_mixed) and the dequant path (grouped_gemm) at M = 128-4096;
# 3. every precision's bench at the shapes file's batch sizes (the issues' reports);
# 4. the rest of the GPU suite in what is left of 560 s.
# Everything in $OUT/w1.tgz.
source scripts/carried_env.sh
carried_setup w1 land || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_land" int 150 'QuantLayerAuto.*:Paths/QuantLayer.*/grouped_mixed:Paths/QuantLayer.*/small_m:*EightTiles*:*ActivationsAndWeightOnInput*'
for pr in w4a16 w8a16; do
  timeout 50 "$BIN_land" bench --precision $pr --path auto --m 128,192,256,384,512,768,1024,2048,4096 > "$W/rule_${pr}_auto.txt" 2>&1
  timeout 50 "$BIN_land" bench --precision $pr --path grouped_mixed --m 128,192,256,384,512,768,1024,2048,4096 > "$W/rule_${pr}_grouped_mixed.txt" 2>&1
  timeout 40 "$BIN_land" bench --precision $pr --path small_m --m 128,192,256,384,512,768 > "$W/rule_${pr}_small_m.txt" 2>&1
  timeout 40 "$BIN_land" bench --precision $pr --path grouped_gemm --m 1024,2048,4096 > "$W/rule_${pr}_grouped_gemm.txt" 2>&1
  echo "rule $pr $(el) s" >> "$W/info.txt"
done
for pr in bf16 fp8_tensor fp8_channel fp8_block w4a16 w8a16 w4a16_awq; do
  timeout 50 "$BIN_land" bench --precision $pr --json "$W/bench_$pr.json" > "$W/bench_$pr.txt" 2>&1
  echo "bench $pr rc=$? $(el) s" >> "$W/info.txt"
done
left=$((560 - $(el)))
[ "$left" -gt 30 ] && gtest_part "$TESTS_land" rest "$left" '-QuantLayerAuto.*:Paths/QuantLayer.*/grouped_mixed:Paths/QuantLayer.*/small_m:*EightTiles*:*ActivationsAndWeightOnInput*'
cat "$W/info.txt"
for f in "$W"/ctest_*.txt; do echo "== $f"; grep -E "^\[  FAILED|^\[  PASSED|tests ran|FAIL:" "$f" | head -12; done
for pr in w4a16 w8a16; do
  for p in grouped_mixed small_m grouped_gemm; do
    echo "== $pr auto -> $p"
    python3 scripts/bench_compare.py "$W/rule_${pr}_auto.txt" "$W/rule_${pr}_$p.txt" --slower 1.001 | tail -46 | awk '{print $2, $3, $6, $7}' | head -50
  done
done
carried_pack

#!/usr/bin/env bash
# v55 call 2 (nvidia-h100-x1), on the build to land (build/carry/land.tgz: HEAD with int4's eight token tiles,
# v53's int4_eight_tiles_rule.patch, the mixed-input GEMM's first group once per block, v54's
# mixed_first_group.patch, and the wna16 bf16 tolerance at 0.2 x rms):
# 1. the integer paths' GPU cases (the eight-tile case that failed at 0.162 x rms in v55's first
#    call among them);
# 2. grouped_mixed against auto for w4a16 / w8a16 at M = 128-4096 (r = 16-1024 rows per expert),
#    for the planner's rule, and every precision's bench at the shapes file's batch sizes (the
#    issues' reports);
# 3. the rest of the GPU suite in what is left of 560 s.
# Everything in $OUT/w1.tgz.
source scripts/carried_env.sh
carried_setup w1 land || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_land" mixed 60 'Paths/QuantLayer.*/grouped_mixed:*ActivationsAndWeightOnInput*'
gtest_part "$TESTS_land" int 120 'Paths/QuantLayer.*/small_m:Paths/QuantLayer.*/grouped_gemm:Paths/QuantLayer.*/grouped_swapped:QuantPrepare.*:QuantLayerAuto.*'
R="--m 128,192,256,384,512,768,1024,2048,4096"
for pr in w4a16 w8a16; do
  for path in auto grouped_mixed; do
    timeout 60 "$BIN_land" bench --precision $pr --path $path $R > "$W/rule_${pr}_${path}.txt" 2>&1
  done
  timeout 40 "$BIN_land" bench --precision $pr --m 1,2,4,8,16,32,64 > "$W/bench_${pr}_decode.txt" 2>&1
done
echo "rule + integer decode $(el) s" >> "$W/info.txt"
for pr in bf16 fp8_tensor fp8_channel fp8_block w4a16_awq; do
  timeout 50 "$BIN_land" bench --precision $pr --json "$W/bench_$pr.json" > "$W/bench_$pr.txt" 2>&1
  echo "bench $pr rc=$? $(el) s" >> "$W/info.txt"
done
left=$((560 - $(el)))
[ "$left" -gt 30 ] && gtest_part "$TESTS_land" rest "$left" '-Paths/QuantLayer.*:QuantPrepare.*:QuantLayerAuto.*:*ActivationsAndWeightOnInput*'
cat "$W/info.txt"
for f in "$W"/ctest_*.txt; do echo "== $f"; grep -E "^\[  FAILED|^\[  PASSED|tests ran|FAIL:" "$f" | head -12; done
for pr in w4a16 w8a16; do
  python3 scripts/bench_compare.py "$W/rule_${pr}_auto.txt" "$W/rule_${pr}_grouped_mixed.txt" --slower 1.001 | tail -46 | awk '{print $2, $3, $6, $7}'
done
carried_pack

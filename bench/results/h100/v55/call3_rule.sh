#!/usr/bin/env bash
# v55 call 3: land2 = 7e5a4a7 (land with the planner's rule for the integer weights: wna16_gemv
# below 64 rows per expert, 24 at I <= 256, the mixed-input GEMM above): the auto cases, then
# auto's w4a16 and w8a16 times at M = 256-4096 (against call 2's forced paths, the same build
# otherwise). $OUT/w3.tgz.
source scripts/carried_env.sh
carried_setup w3 land2 || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_land2" auto 100 'QuantLayerAuto.*'
for pr in w4a16 w8a16; do
  timeout 40 "$BIN_land2" bench --precision $pr --m 256,512,768,1024,2048,4096 > "$W/bench_${pr}_auto.txt" 2>&1
done
echo "benches $(el) s" >> "$W/info.txt"
cat "$W/info.txt"; grep -E "^\[  FAILED|^\[  PASSED|FAIL:" "$W/ctest_auto.txt" | head
for pr in w4a16 w8a16; do awk 'NR > 4 {print $1, $2, $3, $4}' "$W/bench_${pr}_auto.txt"; done
carried_pack

#!/usr/bin/env bash
# v55 call 3: land2 = land with the planner's rule for the integer weights (wna16_gemv below 64
# rows per expert, 24 at I <= 256, the mixed-input GEMM above): the auto cases, then auto
# against land's auto (the old rule: the GEMV further up, then the dequant path), w4a16 A B B A,
# w8a16 A B. $OUT/w3.tgz.
source scripts/carried_env.sh
carried_setup w3 land land2 || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_land2" auto 100 'QuantLayerAuto.*'
abba land land2 w4a16 --precision w4a16 --m 256,512,1024,2048,4096
for v in land land2; do
  b="$root/build/carry/$v/fusedmoe"
  timeout 40 "$b" bench --precision w8a16 --m 256,512,1024,2048,4096 > "$W/bench_w8a16_${v}_r1.txt" 2>&1
done
echo "benches $(el) s" >> "$W/info.txt"
cat "$W/info.txt"; grep -E "^\[  FAILED|^\[  PASSED|FAIL:" "$W/ctest_auto.txt" | head
abba_compare land land2 w4a16 26
python3 scripts/bench_compare.py "$W/bench_w8a16_land_r1.txt" "$W/bench_w8a16_land2_r1.txt" --slower 1.001 | tail -26
carried_pack

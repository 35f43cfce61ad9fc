#!/usr/bin/env bash
# v63 call 7: mt2 = mt with each tile's stages as an inner loop and the tile's epilogue after
# it (mt ran the epilogue inside the stage loop: 2-8% slower at T = 1 than dag2). ABBA dag2 /
# mt2 at T = 1 (w4a16, w4a16_awq), the integer cases at T = 2,2, then mt2's w4a16 bench at
# T = 1,1 / 1,2 / 1,4 / 2,2 / 2,4 / 1,8.
#   carry: ["build/carry/dag2.tgz", "build/carry/mt2.tgz"]
source scripts/carried_env.sh
carried_setup "${W:-w7}" dag2 mt2 || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
F='Paths/QuantLayer.*/small_m:QuantLayerAuto.*:OneTokenWithoutAlign.*'
FUSEDMOE_TPW=2,2 gtest_part "$TESTS_mt2" int_t22 240 "$F"
abba_tagged dag2 mt2 w4a16 --precision w4a16 --m 2,4,8,16,32,64
abba_tagged dag2 mt2 w4a16_awq --precision w4a16_awq --m 2,4,8,16,32,64
for t in 1,1 1,2 1,4 2,2 2,4 1,8; do
  FUSEDMOE_TPW=$t timeout 60 "$BIN_mt2" bench --precision w4a16 --m 2,4,8,16,32,64 > "$W/bench_t${t/,/_}_r1.txt" 2>&1
done
echo "tiles $(el) s" >> "$W/info.txt"
carried_report
for t in $TAGS; do
  echo "== $t mt2 / dag2"
  for r in 1 2; do python3 scripts/bench_compare.py "$W/bench_${t}_dag2_r$r.txt" "$W/bench_${t}_mt2_r$r.txt" --slower 1.001 | tail -31 | awk '{print $2, $3, $6}' | paste -sd' ' | fold -w 250; done
done
for t in 1,2 1,4 2,2 2,4 1,8; do
  echo "== T = $t against 1,1"
  python3 scripts/bench_compare.py "$W/bench_t1_1_r1.txt" "$W/bench_t${t/,/_}_r1.txt" --slower 1.001 | tail -31 | awk '{print $2, $3, $4, $5, $6}' | paste -sd' ' | fold -w 250
done
carried_pack

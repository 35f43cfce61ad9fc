#!/usr/bin/env bash
# v63 call 6: mt = dag2 + wna16_gemv's one-tile warps streaming T row tiles each, the ring
# carried from tile to tile (T from the grid; FUSEDMOE_TPW=G,D sets it per GEMV in this
# experiment build, default 1,1). The integer cases at T = 2,2 and 3,5; ABBA dag2 / mt (T = 1);
# then mt's w4a16 bench at T = 1,1 / 1,2 / 1,4 / 1,8 / 2,4, two rounds.
#   carry: ["build/carry/dag2.tgz", "build/carry/mt.tgz"]
source scripts/carried_env.sh
carried_setup "${W:-w6}" dag2 mt || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
F='Paths/QuantLayer.*/small_m:QuantLayerAuto.*:OneTokenWithoutAlign.*'
FUSEDMOE_TPW=2,2 gtest_part "$TESTS_mt" int_t22 240 "$F"
FUSEDMOE_TPW=3,5 gtest_part "$TESTS_mt" int_t35 240 "$F"
for t in 2,2 3,5 8,8; do
  FUSEDMOE_TPW=$t timeout 60 "$BIN_mt" check --precision w4a16_awq --shape deepseek_v3_tp8 --m 5 > "$W/check_$t.txt" 2>&1
  echo "check T=$t rc=$? $(grep -o 'PASS[^(]*\|FAIL[^(]*' "$W/check_$t.txt" | head -1)" >> "$W/info.txt"
done
abba_tagged dag2 mt w4a16 --precision w4a16 --m 2,4,8,16,32,64
for r in 1 2; do
  for t in 1,1 1,2 1,4 1,8 2,4; do
    FUSEDMOE_TPW=$t timeout 60 "$BIN_mt" bench --precision w4a16 --m 2,4,8,16,32,64 > "$W/bench_t${t/,/_}_r$r.txt" 2>&1
  done
done
echo "tiles $(el) s" >> "$W/info.txt"
carried_report
abba_report dag2 mt 36
for r in 1 2; do
  for t in 1,2 1,4 1,8 2,4; do
    echo "== T = $t against 1,1, round $r"
    python3 scripts/bench_compare.py "$W/bench_t1_1_r$r.txt" "$W/bench_t${t/,/_}_r$r.txt" --slower 1.001 | tail -31 | awk '{print $2, $3, $4, $5, $6}' | paste -sd' ' | fold -w 250
  done
done
carried_pack

#!/usr/bin/env bash
# v63 call 8: mt3 = dag2 + wna16_gemv's one-tile warps streaming several row tiles each (their
# own kernel instantiation, kMultiTile; T from the planner, wna16_tiles_per_warp). The integer
# cases, memcheck and racecheck at DeepSeek-V3 TP8 M = 4 (down at T = 4) and Qwen3 M = 16, then
# ABBA dag2 / mt3 for w4a16 (GPTQ g128), w8a16 and w4a16_awq at M = 1-128.
#   carry: ["build/carry/dag2.tgz", "build/carry/mt3.tgz"]
A="${A:-dag2}" B="${B:-mt3}"
source scripts/carried_env.sh
carried_setup "${W:-w8}" "$A" "$B" || exit 1
bin_b="BIN_$B" tests_b="TESTS_$B"
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "${!tests_b}" int 240 'Paths/QuantLayer.*/small_m:QuantLayerAuto.*:OneTokenWithoutAlign.*:OneTokenInt4Layer.*'
sanitize "${!bin_b}" ds_4 check --precision w4a16 --shape deepseek_v3_tp8 --m 4
sanitize "${!bin_b}" q3_16 check --precision w4a16_awq --shape qwen3_30b_a3b_tp1 --m 16
for pr in w4a16 w8a16 w4a16_awq; do abba_tagged "$A" "$B" "$pr" --precision $pr --m 1,2,4,8,16,32,64,128; done
carried_report
for t in $TAGS; do
  echo "== $t $B / $A"
  for r in 1 2; do python3 scripts/bench_compare.py "$W/bench_${t}_${A}_r$r.txt" "$W/bench_${t}_${B}_r$r.txt" --slower 1.001 | tail -41 | awk '{print $2, $3, $6}' | paste -sd' ' | fold -w 250; done
done
carried_pack

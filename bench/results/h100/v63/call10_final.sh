#!/usr/bin/env bash
# v63 call 10: mt6 = the landed build: mt4 with the planner's final rule (four tiles a warp for
# the integer down GEMV where its grid has at least 8 waves of resident CTAs) and
# MoeArguments::tiles_per_warp_down. The integer cases with the forced-tiles test, memcheck and
# racecheck at DeepSeek-V3 TP8 M = 16 (down at four tiles), ABBA dag2 / mt6 for w4a16 and
# w8a16 at M = 1-128.
#   carry: ["build/carry/dag2.tgz", "build/carry/mt6.tgz"]
source scripts/carried_env.sh
carried_setup "${W:-w10}" dag2 mt6 || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_mt6" int 300 'Paths/QuantLayer.*/small_m:QuantLayerAuto.*:OneTokenWithoutAlign.*:OneTokenInt4Layer.*:SmallMSplitK.ForcedTilesPerWarpMatchTheReference'
sanitize "$BIN_mt6" ds_16 check --precision w4a16 --shape deepseek_v3_tp8 --m 16
for pr in w4a16 w8a16; do abba_tagged dag2 mt6 "$pr" --precision $pr --m 1,2,4,8,16,32,64,128; done
carried_report
for t in $TAGS; do
  echo "== $t mt6 / dag2"
  for r in 1 2; do python3 scripts/bench_compare.py "$W/bench_${t}_dag2_r$r.txt" "$W/bench_${t}_mt6_r$r.txt" --slower 1.001 | tail -41 | awk '{print $2, $3, $6}' | paste -sd' ' | fold -w 250; done
done
carried_pack

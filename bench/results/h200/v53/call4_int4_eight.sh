#!/usr/bin/env bash
# v53 call 4 (not run: no device): int4_eight_tiles_rule.patch (int4 on eight token tiles above
# 24 pairs per expert, as int8) built as build/carry/eight.tgz (eight/) against the same commit
# unpatched (base.tgz, base/): the patched build's integer small_m and auto cases (the first
# GPU check of int4's eight-tile kernels against the reference), two `check` runs, then w4a16
# on auto at M = 64-512 ABBA. Everything in $OUT/w4.tgz.
source scripts/carried_env.sh
carried_setup w4 base eight || exit 1
timeout 240 "$TESTS_eight" --gtest_filter='Paths/QuantLayer.*/small_m:QuantLayerAuto.*' > "$W/ctest_eight.txt" 2>&1
echo "eight cases rc=$? $(el) s" >> "$W/info.txt"
for pr in w4a16 w4a16_awq; do
  timeout 60 "$BIN_eight" check --precision $pr --shape mixtral_8x7b_tp1 --m 128 > "$W/check_${pr}_mixtral_m128.txt" 2>&1
  timeout 60 "$BIN_eight" check --precision $pr --shape llama4_scout_tp8 --m 512 > "$W/check_${pr}_scout_m512.txt" 2>&1
done
echo "checks $(el) s" >> "$W/info.txt"
abba base eight w4a16 --precision w4a16 --m 64,128,256,512
echo "ab $(el) s" >> "$W/info.txt"
cat "$W/info.txt"; grep -h "PASSED\|FAILED" "$W"/ctest_*.txt; grep -h "^result" "$W"/check_*.txt | cut -c1-70
abba_compare base eight w4a16 21
carried_pack

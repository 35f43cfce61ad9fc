#!/usr/bin/env bash
# v53 call 3 (not run: no device): the mixed-input GEMM's epilogue with the activation chosen
# once per tile (189b867 or later: build/carry/tma2.tgz, tma2/) against a9cdb51 (tma.tgz,
# tma/): its GPU cases, ABBA at M = 1024 / 4096; then tma2's grouped_mixed against auto (M =
# 128-4096, w4a16 and w8a16) for the planner's rule. Everything in $OUT/w3.tgz.
source scripts/carried_env.sh
carried_setup w3 tma tma2 || exit 1
timeout 200 "$TESTS_tma2" --gtest_filter='Paths/QuantLayer.*/grouped_mixed:Paths/QuantLayer.*Graph*:QuantPrepare.*' > "$W/ctest_tma2.txt" 2>&1
echo "tma2 cases rc=$? $(el) s" >> "$W/info.txt"
for pr in w4a16 w8a16; do abba tma tma2 "$pr" --precision "$pr" --path grouped_mixed --m 1024,4096; done
echo "ab $(el) s" >> "$W/info.txt"
for pr in w4a16 w8a16; do
  for path in auto grouped_mixed; do
    timeout 90 "$BIN_tma2" bench --precision $pr --path $path --m 128,256,512,1024,2048,4096 > "$W/rule_${pr}_${path}.txt" 2>&1
  done
done
echo "rule $(el) s" >> "$W/info.txt"
cat "$W/info.txt"; grep -h "PASSED\|FAILED" "$W"/ctest_*.txt
for pr in w4a16 w8a16; do abba_compare tma tma2 "$pr"; done
for pr in w4a16 w8a16; do
  echo "$pr: grouped_mixed against auto"
  python3 scripts/bench_compare.py "$W/rule_${pr}_auto.txt" "$W/rule_${pr}_grouped_mixed.txt" --slower 1.001 | tail -31
done
carried_pack

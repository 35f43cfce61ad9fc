#!/usr/bin/env bash
# v54 call 1: v53's calls 3 and 4 in one. Builds (release, made on the build machine, carried as
# build/carry/NAME.tgz): tma = a9cdb51's mixed-input GEMM (HEAD with that one file), tma2 = HEAD
# (e5334ea: the epilogue with the activation chosen once per tile), eight = HEAD with
# v53/int4_eight_tiles_rule.patch (int4 on eight token tiles above 24 pairs per expert).
# 1. tma2's mixed-path, graph and prepare cases and the new activation test; compute-sanitizer on
#    grouped_mixed; ABBA tma / tma2 at M = 1024 / 4096; grouped_mixed against auto at M = 128-4096.
# 2. eight's integer small_m and auto cases (int4's eight-tile kernels against the reference),
#    `check` at two points per int4 format, ABBA tma2 / eight on w4a16 auto at M = 64-512.
# 3. cons = eight with the consumers' first group per block computed once for both halves:
#    its mixed-path cases, ABBA eight / cons on grouped_mixed at M = 1024 / 4096.
# 4. fin = cons with each half block's four slices dequantized as one batch of wgmmas, the next
#    half dequantized while it runs (and dispatch_act): its mixed-path cases, compute-sanitizer,
#    ABBA cons / fin on grouped_mixed.
# Everything in $OUT/w1.tgz.
source scripts/carried_env.sh
carried_setup w1 tma tma2 eight cons fin || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_tma2" tma2 150 'Paths/QuantLayer.*/grouped_mixed:Paths/QuantLayer.*Graph*:QuantPrepare.*:*ActivationsAndWeightOnInput*'
S="--E 8 --H 2048 --I 1408 --topk 2 --routing skewed"
sanitize "$BIN_tma2" tma2_m300 check --precision w4a16_awq $S --m 300 --path grouped_mixed
for pr in w4a16 w8a16; do abba tma tma2 "$pr" --precision "$pr" --path grouped_mixed --m 1024,4096; done
echo "ab epilogue $(el) s" >> "$W/info.txt"
for pr in w4a16 w8a16; do
  for path in auto grouped_mixed; do
    timeout 90 "$BIN_tma2" bench --precision $pr --path $path --m 128,256,512,1024,2048,4096 > "$W/rule_${pr}_${path}.txt" 2>&1
  done
done
echo "rule $(el) s" >> "$W/info.txt"
gtest_part "$TESTS_eight" eight 200 'Paths/QuantLayer.*/small_m:QuantLayerAuto.*'
for pr in w4a16 w4a16_awq; do
  timeout 60 "$BIN_eight" check --precision $pr --shape mixtral_8x7b_tp1 --m 128 > "$W/check_${pr}_mixtral_m128.txt" 2>&1
  timeout 60 "$BIN_eight" check --precision $pr --shape llama4_scout_tp8 --m 512 > "$W/check_${pr}_scout_m512.txt" 2>&1
done
echo "checks $(el) s" >> "$W/info.txt"
abba tma2 eight w4a16e --precision w4a16 --m 64,128,256,512
echo "ab eight $(el) s" >> "$W/info.txt"
gtest_part "$TESTS_cons" cons 100 'Paths/QuantLayer.*/grouped_mixed:*ActivationsAndWeightOnInput*'
for pr in w4a16 w8a16; do abba eight cons "c$pr" --precision "$pr" --path grouped_mixed --m 1024,4096; done
echo "ab cons $(el) s" >> "$W/info.txt"
gtest_part "$TESTS_fin" fin 100 'Paths/QuantLayer.*/grouped_mixed:*ActivationsAndWeightOnInput*'
sanitize "$BIN_fin" fin_m300 check --precision w8a16 $S --m 300 --path grouped_mixed
for pr in w4a16 w8a16; do abba cons fin "f$pr" --precision "$pr" --path grouped_mixed --m 1024,4096; done
echo "ab fin $(el) s" >> "$W/info.txt"
cat "$W/info.txt"; grep -h "PASSED\|FAILED" "$W"/ctest_*.txt; grep -h "ERROR SUMMARY\|Hazard" "$W"/*check_*m300.txt
grep -h "^result" "$W"/check_*.txt | cut -c1-70
for pr in w4a16 w8a16; do abba_compare tma tma2 "$pr"; done
for pr in w4a16 w8a16; do
  echo "$pr: grouped_mixed against auto"
  python3 scripts/bench_compare.py "$W/rule_${pr}_auto.txt" "$W/rule_${pr}_grouped_mixed.txt" --slower 1.001 | tail -31
done
abba_compare tma2 eight w4a16e 21
for pr in w4a16 w8a16; do abba_compare eight cons "c$pr"; done
for pr in w4a16 w8a16; do abba_compare cons fin "f$pr"; done
carried_pack

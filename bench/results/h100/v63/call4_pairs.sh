#!/usr/bin/env bash
# v63 call 4: pa = dag2 + gate-up's pair indices (sorted_pairs) by cp.async ahead of the first
# stages' copies at one and four n-tiles from global x. The integer cases (the split four-tile
# kernels among them, forced by --split-k in the bench below), then ABBA dag2 / pa for w4a16
# (GPTQ g128) and w4a16_awq at M = 1-64, and w8a16 at M = 2-16.
#   carry: ["build/carry/dag2.tgz", "build/carry/pa.tgz"]
A="${A:-dag2}" B="${B:-pa}"
source scripts/carried_env.sh
carried_setup "${W:-w4}" "$A" "$B" || exit 1
bin_b="BIN_$B" tests_b="TESTS_$B"
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "${!tests_b}" int 240 'Paths/QuantLayer.*/small_m:QuantLayerAuto.*:OneTokenWithoutAlign.*:OneTokenInt4Layer.*'
for sk in 2,2 4,4; do
  timeout 60 "${!bin_b}" check --precision w4a16 --shape qwen2_57b_a14b_tp4 --m 64 --split-k $sk > "$W/check_split$sk.txt" 2>&1
  echo "check split $sk rc=$? $(tail -1 "$W/check_split$sk.txt")" >> "$W/info.txt"
done
for pr in w4a16 w4a16_awq; do abba_tagged "$A" "$B" "$pr" --precision $pr --m 1,2,4,8,16,32,64; done
abba_tagged "$A" "$B" w8a16 --precision w8a16 --m 2,4,8,16
abba_tagged "$A" "$B" split4 --precision w4a16 --m 64 --split-k 2,2 --shape mixtral_8x7b_tp1,qwen2_57b_a14b_tp4
carried_report
for t in $TAGS; do
  echo "== $t"
  for r in 1 2; do python3 scripts/bench_compare.py "$W/bench_${t}_${A}_r$r.txt" "$W/bench_${t}_${B}_r$r.txt" --slower 1.001 | tail -36 | awk '{print $2, $3, $6}' | paste -sd' ' | fold -w 240; done
done
carried_pack

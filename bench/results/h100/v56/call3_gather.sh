#!/usr/bin/env bash
# v56 call 3: the mixed-input GEMM's GEMM1 reading x by token (no gather kernel, no gathered copy).
# Builds (build/carry/*.tgz): land = main (42ee22c); gath = land + x by token on 128-token tiles
# (the planner gathers where wna16_gemm_tile_tokens gives 128; 256-token tiles keep the copy and
# the TMA); g128 = gath + x by token everywhere, on 128-token tiles (both GEMMs).
# 1. gath's and g128's mixed-path cases, the auto and weight-on-input cases; compute-sanitizer
#    memcheck + racecheck on gath's grouped_mixed;
# 2. ABBA land / gath, w4a16 and w8a16, --path grouped_mixed, M = 256-4096; land / g128 w4a16
#    at M = 1024-4096. $OUT/w3.tgz.
source scripts/carried_env.sh
carried_setup w3 land gath g128 || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_gath" gath 120 'Paths/QuantLayer.*/grouped_mixed:QuantLayerAuto.*:*ActivationsAndWeightOnInput*'
gtest_part "$TESTS_g128" g128 60 'Paths/QuantLayer.*/grouped_mixed'
sanitize "$BIN_gath" gath check --precision w4a16 --path grouped_mixed --E 8 --H 2048 --I 1408 --topk 2 --routing skewed --m 300
timeout 60 compute-sanitizer --tool memcheck "$BIN_gath" check --precision w8a16 --path grouped_mixed --E 16 --H 1000 --I 704 --topk 4 --m 77 > "$W/memcheck_gath_w8.txt" 2>&1
echo "memcheck w8 rc=$? $(el) s" >> "$W/info.txt"
abba land gath w4a16 --precision w4a16 --path grouped_mixed --m 256,512,1024,2048,4096
abba land gath w8a16 --precision w8a16 --path grouped_mixed --m 256,512,1024,2048,4096
echo "abba gath $(el) s" >> "$W/info.txt"
abba land g128 w4a16w --precision w4a16 --path grouped_mixed --m 1024,2048,4096
echo "abba g128 $(el) s" >> "$W/info.txt"
cat "$W/info.txt"
for f in "$W"/ctest_*.txt; do echo "== $f"; grep -E "^\[  FAILED|^\[  PASSED|tests ran|Failure" "$f" | head -12; done
for f in "$W"/memcheck_*.txt "$W"/racecheck_*.txt; do echo "== $f"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|check: |rel" "$f" | head -4; done
abba_compare land gath w4a16 27
abba_compare land gath w8a16 27
abba_compare land g128 w4a16w 17
carried_pack

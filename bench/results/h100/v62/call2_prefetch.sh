#!/usr/bin/env bash
# v62 call 2: pf = fin + wna16_gemv's token rows' lines prefetched into L1 a ring's depth ahead
# (and gate-up's sorted_pairs lookup before the first copies). The integer GEMV's cases, then
# ABBA fin / pf for w4a16 (GPTQ g128), w4a16_awq and w8a16 at M = 1-128.
#   carry: ["build/carry/fin.tgz", "build/carry/pf.tgz"]
source scripts/carried_env.sh
carried_setup w2 fin pf || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_pf" int 200 'Paths/QuantLayer.*/small_m:QuantLayerAuto.*:OneTokenWithoutAlign.*:OneTokenInt4Layer.*'
for pr in w4a16 w8a16 w4a16_awq; do abba_tagged fin pf "$pr" --precision $pr --m 1,2,4,8,16,32,64,128; done
carried_report
abba_report fin pf 42
carried_pack

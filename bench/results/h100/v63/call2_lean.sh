#!/usr/bin/env bash
# v63 call 2: nz = dag2 + wna16_gemv's copies predicated instead of branched around (every
# kernel) and, at one n-tile, the early x loads keeping their registers past the slice instead
# of zeroing them (zeroing loads only where K's last, partial block is loaded). The integer
# cases, memcheck and racecheck at a partial K block (H = 2880, AWQ) and at Qwen3 M = 16, then
# ABBA dag2 / nz for w4a16 (GPTQ g128), w8a16 and w4a16_awq at M = 1-128.
#   carry: ["build/carry/dag2.tgz", "build/carry/nz.tgz"]
A="${A:-dag2}" B="${B:-nz}"
source scripts/carried_env.sh
carried_setup "${W:-w2}" "$A" "$B" || exit 1
bin_b="BIN_$B" tests_b="TESTS_$B"
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "${!tests_b}" int 240 'Paths/QuantLayer.*/small_m:QuantLayerAuto.*:OneTokenWithoutAlign.*:OneTokenInt4Layer.*'
sanitize "${!bin_b}" ktail check --precision w4a16_awq --E 60 --H 2880 --I 1408 --topk 4 --m 19
sanitize "${!bin_b}" q3_16 check --precision w4a16 --shape qwen3_30b_a3b_tp1 --m 16
for pr in w4a16 w8a16 w4a16_awq; do abba_tagged "$A" "$B" "$pr" --precision $pr --m 1,2,4,8,16,32,64,128; done
carried_report
abba_report "$A" "$B" 42
carried_pack

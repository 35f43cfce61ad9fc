#!/usr/bin/env bash
# v62 call 3: ex = fin + wna16_gemv's one-tile x of each stage's first block loaded a block
# ahead (kEarlyX) and its shared-x loads without predicates (kSharedX). The integer GEMV's
# cases, memcheck and racecheck at one and four tiles, then ABBA fin / ex for w4a16 (GPTQ g128),
# w8a16 and w4a16_awq at M = 1-128. Call 6 runs it as A=ex B=ex2 W=w6.
#   carry: ["build/carry/fin.tgz", "build/carry/ex.tgz"]
A="${A:-fin}" B="${B:-ex}"
source scripts/carried_env.sh
carried_setup "${W:-w3}" "$A" "$B" || exit 1
bin_b="BIN_$B" tests_b="TESTS_$B"
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "${!tests_b}" int 200 'Paths/QuantLayer.*/small_m:QuantLayerAuto.*:OneTokenWithoutAlign.*:OneTokenInt4Layer.*'
sanitize "${!bin_b}" q3_16 check --precision w4a16 --shape qwen3_30b_a3b_tp1 --m 16
sanitize "${!bin_b}" q2_64 check --precision w4a16 --shape qwen2_57b_a14b_tp4 --m 64
for pr in w4a16 w8a16 w4a16_awq; do abba_tagged "$A" "$B" "$pr" --precision $pr --m 1,2,4,8,16,32,64,128; done
carried_report
abba_report "$A" "$B" 42
carried_pack

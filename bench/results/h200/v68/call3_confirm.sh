#!/usr/bin/env bash
# v68 call 3 (call 2 could not start; the session's device time nearly gone): the split rules
# of cand (call 2's header) against mend, ABBA at the points they change, and cand's forced-split
# and dense edge cases.
#   carry: ["build/carry/mend.tgz", "build/carry/cand.tgz"]
# Run as `bash bench/results/h200/v68/call3_confirm.sh` (W unset: the work folder is $OUT/w3).
source scripts/carried_env.sh
carried_setup "${W:-w3}" mend cand || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
abba_tagged mend cand channel --precision fp8_channel --m 1,2,4,8,16,32
abba_tagged mend cand bf16 --precision bf16 --m 4,8,16,32
abba_tagged mend cand tensor --precision fp8_tensor --m 2,8,16
gtest_part "$TESTS_cand" cand 60 'SmallMSplitK.EveryForcedSplitMatchesTheReference:Paths/DenseLayer.EdgeShapes/small_m:Paths/Fp8Layer.EveryScalingModeOnBenchShapes/small_m'
carried_report
abba_report mend cand 8
carried_pack

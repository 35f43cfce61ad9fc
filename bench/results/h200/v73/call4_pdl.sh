#!/usr/bin/env bash
# v73 call 4 (queued, not run): opp = main73 with pdl_candidate.patch (against 7fd8292): the
# one-pass quantizer also a programmatic dependent launch where its two-pass form was (the
# grouped path's x under align's end, the small-M intermediate under the gate-up GEMV's tail),
# a cooperative launch with both attributes; the kernel waits for its predecessor first. The
# question is whether the runtime takes both attributes (a refused launch fails the FP8 cases
# here), then what it gains (v47 measured the two-pass x quantizer's PDL at 0.989-0.992 on
# fp8_tensor Scout M = 64-512). 1. opp's FP8 cases, memcheck and racecheck; 2. ABBA main73 /
# opp of fp8_tensor at every M.
#   Builds: main73 = 7fd8292 (or later main) as is; opp = the same with
#   `git apply bench/results/h200/v73/pdl_candidate.patch`; both packed as v64's results README says.
#   carry: ["build/carry/main73.tgz", "build/carry/opp.tgz"]
# Run as `bash bench/results/h200/v73/call4_pdl.sh` (W unset: the work folder is $OUT/w4).
source scripts/carried_env.sh
carried_setup "${W:-w4}" main73 opp || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_opp" fp8 300 '*Fp8*'
sanitize "$BIN_opp" opp check --precision fp8_tensor --shape qwen3_30b_a3b_tp1 --m 64
abba_tagged main73 opp tensor --precision fp8_tensor
carried_report
abba_report main73 opp 40
carried_pack

#!/usr/bin/env bash
# v62 call 5, the landed build of call 4 (ex.tgz, 213a0f1's kernels): call 1's ncu at two points
# and the per-SASS samples of the one-tile gate-up (Qwen2 M = 16), to see where the stalls went.
#   carry: ["build/carry/ex.tgz"]
B=ex W=w5 POINTS="qwen2_57b_a14b_tp4:16 mixtral_8x7b_tp1:64" SASS=qw2_16 bash bench/results/h100/v62/call1_profile.sh

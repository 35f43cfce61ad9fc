#!/usr/bin/env bash
# v63 call 1, main's build (dag2 = v62's landed kernels): ncu of both int4 GEMVs at the
# one-tile decode points M = 2-16 (time, DRAM %, issue %, instructions, grid, stalls), then
# per-SASS samples of the one-tile kernel at Qwen2 TP4 M = 16 and Qwen3 M = 4.
#   carry: ["build/carry/dag2.tgz"]
export B=dag2 W=w1 SASS=qw2_16
export POINTS="qwen3_30b_a3b_tp1:2 qwen3_30b_a3b_tp1:4 qwen3_30b_a3b_tp1:8 deepseek_v3_tp8:2 deepseek_v3_tp8:4 qwen2_57b_a14b_tp4:4 qwen2_57b_a14b_tp4:16 llama4_scout_tp8:8"
source scripts/carried_env.sh
bash bench/results/h100/v62/call1_profile.sh

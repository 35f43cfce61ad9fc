#!/usr/bin/env bash
# v62 call 10: the landed build (dag2): the integer path's GPU cases (the auto ones now send
# Qwen2 TP4 at M = 1 to the one-token layer).
#   carry: ["build/carry/dag2.tgz"]
source scripts/carried_env.sh
carried_setup w10 dag2 || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_dag2" int 300 'Paths/QuantLayer.*:QuantLayerAuto.*:OneToken*:QuantPrepare.*'
carried_report
carried_pack

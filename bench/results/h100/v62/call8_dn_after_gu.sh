#!/usr/bin/env bash
# v62 call 8: dag = ex2 + the one-token layer's down codes in the gate-up codes' place where
# both do not fit (dn_after_gu: Qwen2 TP4 on 132 SMs). The one-token cases (Qwen2 among them),
# memcheck and racecheck at Qwen2 M = 1, then ABBA ex2 / dag at M = 1 and 2 (w4a16 GPTQ, AWQ).
#   carry: ["build/carry/ex2.tgz", "build/carry/dag.tgz"]
source scripts/carried_env.sh
carried_setup w8 ex2 dag || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_dag" otl 200 'OneTokenInt4Layer.*:OneTokenWithoutAlign.*'
sanitize "$BIN_dag" q2_1 check --precision w4a16 --shape qwen2_57b_a14b_tp4 --m 1
for pr in w4a16 w4a16_awq; do abba_tagged ex2 dag "$pr" --precision $pr --m 1,2; done
carried_report
abba_report ex2 dag 12
carried_pack

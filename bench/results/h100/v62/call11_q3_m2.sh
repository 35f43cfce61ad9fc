#!/usr/bin/env bash
# v62 call 11: call 9's Qwen3 M = 2 reading (1.015-1.030 for dag2 against ex2, whose kernels
# there are the same): ABBA ex2 / dag2 again, two pairs of rounds, Qwen3 and DeepSeek-V3 TP8 at
# M = 1 and 2 (w4a16 GPTQ and AWQ).
#   carry: ["build/carry/ex2.tgz", "build/carry/dag2.tgz"]
source scripts/carried_env.sh
carried_setup w11 ex2 dag2 || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
for pr in w4a16_a w4a16_b w4a16_awq_a; do
  abba_tagged ex2 dag2 "$pr" --precision ${pr%_?} --m 1,2 --shape qwen3_30b_a3b_tp1,deepseek_v3_tp8
done
carried_report
abba_report ex2 dag2 5
carried_pack

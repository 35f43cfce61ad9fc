#!/usr/bin/env bash
# v61 call 7: l7a = l5t (l3t with stamps) reading the intermediate in one pass (two chunks per
# thread, both loads in flight first; call 4 measured the intermediate 0.35 us sooner that
# way, beside a pairing of the down items that lost). Cases of l3t and l7a, their stamps,
# main / l3t / l7a at M = 1 (two rounds).
#   carry: ["build/carry/main.tgz", "build/carry/l3t.tgz", "build/carry/l7a.tgz"]
source scripts/carried_env.sh
carried_setup w7 main l3t l7a || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
for b in l3t l7a; do gtest_part "$root/build/carry/$b/fusedmoe_gpu_tests" $b 90 'OneTokenInt4Layer.*:OneTokenWithoutAlign.*'; done
otl_traces l3t qwen3_30b_a3b_tp1 deepseek_v3_tp8 llama4_scout_tp8
otl_traces l7a qwen3_30b_a3b_tp1 deepseek_v3_tp8 llama4_scout_tp8
m1_rounds main l3t l7a
cat "$W/info.txt"
grep -E "^\[  FAILED|^\[  PASSED" "$W"/ctest_*.txt
otl_trace_report l3t qwen3_30b_a3b_tp1 deepseek_v3_tp8 llama4_scout_tp8
otl_trace_report l7a qwen3_30b_a3b_tp1 deepseek_v3_tp8 llama4_scout_tp8
m1_report main l3t l7a
carried_pack

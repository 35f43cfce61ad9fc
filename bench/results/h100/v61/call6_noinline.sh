#!/usr/bin/env bash
# v61 call 6: l6i = l5t with the kernel compiled per scale type (no fp32 conversion pass, one
# __syncthreads fewer before the gate-up GEMM); l6t = l6i with block_product not inlined, so
# that both GEMMs run one copy of its code (call 5: the down GEMM's first item took 0.5-1 us
# longer than the next). Cases of both, their stamps, main / l6i / l6t at M = 1 (two rounds).
#   carry: ["build/carry/main.tgz", "build/carry/l6i.tgz", "build/carry/l6t.tgz"]
source scripts/carried_env.sh
carried_setup w6 main l6i l6t || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
for b in l6i l6t; do gtest_part "$root/build/carry/$b/fusedmoe_gpu_tests" $b 90 'OneTokenInt4Layer.*:OneTokenWithoutAlign.*'; done
otl_traces l6i qwen3_30b_a3b_tp1 deepseek_v3_tp8 llama4_scout_tp8
otl_traces l6t qwen3_30b_a3b_tp1 deepseek_v3_tp8 llama4_scout_tp8
m1_rounds main l6i l6t
cat "$W/info.txt"
grep -E "^\[  FAILED|^\[  PASSED" "$W"/ctest_*.txt
otl_trace_report l6i qwen3_30b_a3b_tp1 deepseek_v3_tp8 llama4_scout_tp8
otl_trace_report l6t qwen3_30b_a3b_tp1 deepseek_v3_tp8 llama4_scout_tp8
m1_report main l6i l6t
carried_pack

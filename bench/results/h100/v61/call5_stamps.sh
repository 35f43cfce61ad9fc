#!/usr/bin/env bash
# v61 call 5: where l3t's down phase and Scout's parameters spend their time (l5t = l3t with
# four more stamps: all parameters landed, warp 0 after its first down tile and after its
# last, every warp's down items done), and what the cooperative launch costs (l5n = l5t
# launched without the cooperative attribute, its grid barrier a hand-rolled counter and
# generation word; a measurement only: nothing guarantees its CTAs co-resident).
#   carry: ["build/carry/main.tgz", "build/carry/l5t.tgz", "build/carry/l5n.tgz"]
source scripts/carried_env.sh
carried_setup w5 main l5t l5n || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
otl_traces l5t qwen3_30b_a3b_tp1 deepseek_v3_tp8 llama4_scout_tp8
otl_traces l5n qwen3_30b_a3b_tp1 deepseek_v3_tp8 llama4_scout_tp8
m1_rounds main l5t l5n
cat "$W/info.txt"
otl_trace_report l5t qwen3_30b_a3b_tp1 deepseek_v3_tp8 llama4_scout_tp8
otl_trace_report l5n qwen3_30b_a3b_tp1 deepseek_v3_tp8 llama4_scout_tp8
m1_report main l5t l5n
carried_pack

#!/usr/bin/env bash
# v70 call 4: why main's (10676a9) FP8 glue kernels at mid M run below the read roofline
# (call 2: Qwen3 M = 1024 per-channel x quantizer 12.0 us for 4.3 MB, the activation's 17.5
# us at 1.44 TB/s, the combine 17.0 us at 1.98 TB/s; call 3: their scale-slot searches are not
# it): ncu's issue, occupancy and stall reasons per kernel (ncu_points), Qwen3 and Qwen2 TP4
# at M = 1024; then, on an H200, main's bench of every precision.
#   carry: ["build/carry/main.tgz"]
# Run as `bash bench/results/h200/v70/call4_glue.sh` (W unset: the work folder is $OUT/w4).
source scripts/carried_env.sh
carried_setup "${W:-w4}" main || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
ncu_points "$BIN_main" quant fp8_quantize "qwen3_30b_a3b_tp1:1024 qwen2_57b_a14b_tp4:1024" --precision fp8_channel
ncu_points "$BIN_main" comb combine_kernel "qwen3_30b_a3b_tp1:1024 qwen2_57b_a14b_tp4:1024" --precision fp8_channel
if nvidia-smi -L | grep -q H200 && [ "$(el)" -lt 300 ]; then
  bench_each "$BIN_main" bf16 fp8_tensor fp8_channel fp8_block w4a16 w4a16_awq w8a16
fi
carried_report
python3 scripts/ncu_summary.py "$W" --detail 2>&1 | tail -40
carried_pack

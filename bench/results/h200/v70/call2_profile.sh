#!/usr/bin/env bash
# v70 call 2: where main's (10676a9) FP8 time goes where vLLM's column is furthest ahead (ncu,
# one layer call per point, each kernel with a cold L2: scripts/profile.sh), per-channel at
# mid M and prefill, and at decode; then fp8_block's small-M split sweep with both splits
# free (G, D in 1, 2, 4, 8; v69's sweep held D = 1).
#   carry: ["build/carry/main.tgz"]
# Run as `bash bench/results/h200/v70/call2_profile.sh` (W unset: the work folder is $OUT/w2).
source scripts/carried_env.sh
carried_setup "${W:-w2}" main || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
OUT="$W" PRECISION=fp8_channel FUSEDMOE_BIN="$BIN_main" bash scripts/profile.sh \
  qwen3_30b_a3b_tp1:1024 qwen2_57b_a14b_tp4:1024 llama4_scout_tp8:256 llama4_scout_tp8:1024 mixtral_8x7b_tp1:256 \
  qwen3_30b_a3b_tp1:4096 llama4_scout_tp8:4096 qwen3_30b_a3b_tp1:4 qwen3_30b_a3b_tp1:16 qwen2_57b_a14b_tp4:16 > /dev/null 2>&1
mv "$W/profile.txt" "$W/profile_fp8_channel.txt"
echo "profile $(el) s" >> "$W/info.txt"
for g in 1 2 4 8; do
  for d in 1 2 4 8; do
    [ "$(el)" -lt 480 ] || break 2
    timeout 60 "$BIN_main" bench --precision fp8_block --m 1,2,4,8,16,32 --split-k "$g,$d" > "$W/sweep_fp8_block_${g}_$d.txt" 2>&1
  done
done
timeout 60 "$BIN_main" bench --precision fp8_block --m 1,2,4,8,16,32 > "$W/sweep_fp8_block_auto.txt" 2>&1
echo "sweep fp8_block $(el) s" >> "$W/info.txt"
carried_report
grep -vE "^\s+(read|write)" "$W/profile_fp8_channel.txt" | head -150
python3 bench/results/h200/v68/sweep_report.py "$W" fp8_block | tail -34
carried_pack

#!/usr/bin/env bash
# v70 call 6: call 5's candidates lost in the layer (wr256 / wr512 1.01-1.037 at M = 256-1024,
# comb 0.995-1.009): each kernel's own time beside main's (scripts/profile.sh, ncu, one layer
# call, cold L2 per kernel), fp8_channel Qwen3 and Qwen2 TP4 at M = 1024 and 256; then, on an
# H200, main's bench of every precision.
#   carry: ["build/carry/main.tgz", "build/carry/wr512.tgz", "build/carry/comb.tgz"]
# Run as `bash bench/results/h200/v70/call6_kernels.sh` (W unset: the work folder is $OUT/w6).
source scripts/carried_env.sh
carried_setup "${W:-w6}" main wr512 comb || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
for b in main wr512 comb; do
  bin="$root/build/carry/$b/fusedmoe"
  OUT="$W" PRECISION=fp8_channel FUSEDMOE_BIN="$bin" bash scripts/profile.sh \
    qwen3_30b_a3b_tp1:1024 qwen2_57b_a14b_tp4:1024 qwen3_30b_a3b_tp1:256 > /dev/null 2>&1
  mv "$W/profile.txt" "$W/profile_$b.txt"
done
rm -f "$W/ncu_raw.csv"
echo "profile $(el) s" >> "$W/info.txt"
if nvidia-smi -L | grep -q H200 && [ "$(el)" -lt 200 ]; then
  bench_each "$BIN_main" bf16 fp8_tensor fp8_channel fp8_block w4a16 w4a16_awq w8a16
fi
carried_report
for b in main wr512 comb; do echo "== $b"; grep -E "^==|quantize|combine|sum of" "$W/profile_$b.txt" | sed 's/read .*//'; done
carried_pack

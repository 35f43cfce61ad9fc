#!/usr/bin/env bash
# v56 call 2, main's build (land.tgz): where the layer's time goes, kernel by kernel (ncu,
# caches flushed before each kernel, clocks not locked): w4a16 at M = 1, 64 and 4096, bf16 at
# M = 1 and 4096, every bench shape; the first layer runs of a bench point (12 kernels).
# $OUT/w2.tgz; a table of kernel, µs, DRAM % and tensor-pipe % per point last.
source scripts/carried_env.sh
carried_setup w2 land || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
K='regex:align|combine|gather|wna16|act_kernel|device_kernel|gemv|one_token'
M='gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed'
for pt in "w4a16 1" "w4a16 64" "w4a16 4096" "bf16 1" "bf16 4096"; do
  set -- $pt
  for s in mixtral_8x7b_tp1 qwen2_57b_a14b_tp4 qwen3_30b_a3b_tp1 deepseek_v3_tp8 llama4_scout_tp8; do
    timeout 90 ncu --clock-control none --print-units base --metrics "$M" -k "$K" -c 12 --csv "$BIN_land" bench --shape $s --m $2 --precision $1 --seconds 0.001 \
      > "$W/ncu_$1_$2_$s.csv" 2> "$W/ncu_$1_$2_$s.err"
  done
  echo "$pt $(el) s" >> "$W/info.txt"
done
cat "$W/info.txt"
python3 scripts/ncu_summary.py "$W"
carried_pack

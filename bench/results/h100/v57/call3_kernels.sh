#!/usr/bin/env bash
# v57 call 3: each kernel of one layer call at M = 1 (ncu, caches flushed before each kernel,
# clocks not locked), as v56's call2_kernels.sh: fin (the landed rule) at w4a16 and w8a16, land
# (a261e3d) at w4a16, every bench shape: the one-token int4 kernel against land's down GEMV and
# combine, and int8's down GEMV beside int4's. $OUT/w3.tgz; the table last.
source scripts/carried_env.sh
carried_setup w3 land fin || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
K='regex:align|combine|gather|wna16|act_kernel|device_kernel|gemv|one_token'
M='gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed'
for pt in "fin w4a16" "fin w8a16" "land w4a16"; do
  set -- $pt
  bin="$root/build/carry/$1/fusedmoe"
  for s in mixtral_8x7b_tp1 qwen2_57b_a14b_tp4 qwen3_30b_a3b_tp1 deepseek_v3_tp8 llama4_scout_tp8; do
    timeout 60 ncu --clock-control none --print-units base --metrics "$M" -k "$K" -c 12 --csv "$bin" bench --shape $s --m 1 --precision $2 --seconds 0.001 \
      > "$W/ncu_$1_$2_$s.csv" 2> "$W/ncu_$1_$2_$s.err"
  done
  echo "$pt $(el) s" >> "$W/info.txt"
done
cat "$W/info.txt"
python3 scripts/ncu_summary.py "$W" | tee "$W/summary.txt"
carried_pack

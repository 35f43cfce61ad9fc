#!/usr/bin/env bash
# v60 call 2: call 1 found ring (the producer warp's ring of 16 per-row bulk copies per unit)
# 1.3-2.7x slower than main's GEMVs at M = 1. Is it the copies' count (ring: Qwen3 224 bulk
# copies per CTA, DeepSeek-V3 640) or the design? otl (the whole share resident, 2 copies per
# gate-up output, 1 per down slot: Qwen3 20 per CTA, DeepSeek-V3 36) at M = 1 beside main and
# ring, and ncu of otl's kernel.
#   carry: ["build/carry/main.tgz", "build/carry/otl.tgz", "build/carry/ring.tgz"]
source scripts/carried_env.sh
carried_setup w2 main otl ring || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
for b in main otl ring; do
  timeout 60 "$root/build/carry/$b/fusedmoe" bench --precision w4a16 --m 1 > "$W/bench_m1_$b.txt" 2>&1
  echo "bench $b rc=$? $(el) s" >> "$W/info.txt"
done
timeout 30 "$BIN_otl" check --precision w4a16 --shape deepseek_v3_tp8 --m 1 > "$W/check_otl.txt" 2>&1
echo "check otl rc=$? $(el) s" >> "$W/info.txt"
K='regex:one_token'
M='gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed'
for s in qwen3_30b_a3b_tp1 deepseek_v3_tp8; do
  timeout 40 ncu --clock-control none --print-units base --metrics "$M" -k "$K" -c 2 --csv "$BIN_otl" \
    bench --shape $s --m 1 --precision w4a16 --seconds 0.001 > "$W/ncu_otl_$s.csv" 2> "$W/ncu_otl_$s.err"
done
cat "$W/info.txt"
for b in main otl ring; do echo "== $b"; grep -E "^ *w4a16|shape|M " "$W/bench_m1_$b.txt" | head -12; done
tail -2 "$W/check_otl.txt"
python3 scripts/ncu_summary.py "$W"
carried_pack

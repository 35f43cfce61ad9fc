#!/usr/bin/env bash
# v52 call 2, prepared and NOT run (v52 had no device). Act-order GPTQ weights, prepared with K
# in group order (docs/FORMATS.md): before v52 every act-order batch took the dequant path (the
# GEMV refused g_idx); now the planner's rules apply as without act-order, behind a column
# gather of x per expert. Run after call 1 (v51's call1_device_script.sh, which runs the whole
# GPU suite and so the new act-order cases), on the same bins.tgz:
#  1. compute-sanitizer memcheck / racecheck on act-order at decode (small_m), on the dequant
#     path and on the mixed path (the by-pair and by-position gathers);
#  2. w4a16_gptq_actorder on auto (the GEMV at decode), on grouped_gemm (the dequant path,
#     which act-order took at every M before), and w4a16 (no act-order) on auto: the gather's
#     cost, M = 1-1024.
set -o pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w2"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
[ -x build/carry/final/fusedmoe ] || tar xzf build/carry/bins.tgz -C build/carry
B=$root/build/carry/final/fusedmoe; t0=$(date +%s)
for run in "3 small_m" "300 grouped_gemm" "300 grouped_mixed"; do
  set -- $run
  for tool in memcheck racecheck; do
    timeout 120 compute-sanitizer --tool $tool $B check --precision w4a16_gptq_actorder --E 8 --H 2880 --I 704 \
      --topk 2 --m $1 --routing skewed --path $2 > "$W/${tool}_m$1_$2.txt" 2>&1
  done
done
echo "sanitizers $(( $(date +%s) - t0 )) s" > "$W/info.txt"
P="--m 1,2,4,8,16,32,64,128,256,1024"
timeout 150 $B bench --precision w4a16_gptq_actorder --path auto $P > "$W/bench_actorder_auto.txt" 2>&1
timeout 150 $B bench --precision w4a16_gptq_actorder --path grouped_gemm $P > "$W/bench_actorder_dequant.txt" 2>&1
timeout 150 $B bench --precision w4a16 --path auto $P > "$W/bench_w4a16_auto.txt" 2>&1
echo "benches $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
cat "$W/info.txt"; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|result" "$W"/*check_m*.txt
# act-order on auto against the dequant path (ratio auto / dequant), then plain w4a16's table
python3 scripts/bench_compare.py "$W/bench_actorder_dequant.txt" "$W/bench_actorder_auto.txt" --slower 1.0 | tail -60
grep -E "^[a-z0-9_]+ +[0-9]+ " "$W/bench_w4a16_auto.txt" | awk '{print $1, $2, $3, $4}'
tar czf "$OUT/call2.tgz" -C "$W" . && rm -rf "$W"

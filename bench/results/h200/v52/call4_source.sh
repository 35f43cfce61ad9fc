#!/usr/bin/env bash
# v52 call 4: where the mixed-input GEMM's warps stall, per SASS instruction (ncu source
# counters of GEMM1, w4a16 Mixtral M = 1024), and compute-sanitizer on grouped_mixed and on
# act-order (call 3's shape had K = 2880, which group 128 does not divide: refused).
set -o pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w4"; rm -rf "$W"; mkdir -p "$W"
mkdir -p /work 2>/dev/null && ln -sfn "$root" /work/main 2>/dev/null
export FUSEDMOE_SHAPES="$root/shapes/models.json"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
[ -x build/carry/final/fusedmoe ] || tar xzf build/carry/bins.tgz -C build/carry
B=$root/build/carry/final/fusedmoe; t0=$(date +%s)
timeout 240 ncu --clock-control none --section SourceCounters --section WarpStateStats --import-source no \
  -k regex:wna16_grouped -c 1 -o "$W/gemm1" $B bench --shape mixtral_8x7b_tp1 --m 1024 --precision w4a16 \
  --path grouped_mixed --seconds 0.001 > "$W/ncu_log.txt" 2>&1
ncu --import "$W/gemm1.ncu-rep" --page source --csv --print-source sass > "$W/gemm1_sass.csv" 2>"$W/ncu_src_err.txt"
gzip -9 "$W/gemm1_sass.csv"; rm -f "$W/gemm1.ncu-rep"
echo "ncu $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
S="--E 8 --H 2048 --I 1408 --topk 2 --routing skewed"
for run in "300 grouped_mixed w4a16_awq" "1024 grouped_mixed w8a16" "3 small_m w4a16_gptq_actorder" \
           "300 grouped_mixed w4a16_gptq_actorder" "300 grouped_gemm w4a16_gptq_actorder"; do
  set -- $run
  for tool in memcheck racecheck; do
    timeout 60 compute-sanitizer --tool $tool $B check --precision $3 $S --m $1 --path $2 > "$W/${tool}_$3_$2_m$1.txt" 2>&1
  done
done
echo "done $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
cat "$W/info.txt"; tail -3 "$W/ncu_log.txt"; head -3 "$W/ncu_src_err.txt"; ls -la "$W"
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|result\|invalid" "$W"/*check_*.txt

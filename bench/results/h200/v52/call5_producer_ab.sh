#!/usr/bin/env bash
# v52 call 5: the mixed-input GEMM's producer with one multiply-add per token-row copy (rows of
# x read four at a time from shared memory; build/carry/cand.tgz, cand/) against main
# (bins.tgz, final/), ABBA, grouped_mixed at M = 1024 / 4096, w4a16 and w8a16; the
# candidate's mixed-path GPU cases; then compute-sanitizer (grouped_mixed, act-order) and,
# time allowing, ncu source counters of the candidate's GEMM1.
set -o pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w5"; rm -rf "$W"; mkdir -p "$W"
mkdir -p /work 2>/dev/null && ln -sfn "$root" /work/main 2>/dev/null
export FUSEDMOE_SHAPES="$root/shapes/models.json"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
[ -x build/carry/final/fusedmoe ] || tar xzf build/carry/bins.tgz -C build/carry
tar xzf build/carry/cand.tgz -C build/carry
A=$root/build/carry/final/fusedmoe; C=$root/build/carry/cand/fusedmoe; t0=$(date +%s)
timeout 100 $root/build/carry/cand/fusedmoe_gpu_tests --gtest_filter='Paths/QuantLayer.*/grouped_mixed' > "$W/ctest_mixed_cand.txt" 2>&1
echo "cand mixed cases rc=$? $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
P="--path grouped_mixed --m 1024,4096"
for round in 1 2; do
  for v in $([ $round = 1 ] && echo "base cand" || echo "cand base"); do
    bin=$([ $v = base ] && echo $A || echo $C)
    for pr in w4a16 w8a16; do timeout 60 $bin bench --precision $pr $P > "$W/bench_${pr}_${v}_r$round.txt" 2>&1; done
  done
done
echo "ab $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
S="--E 8 --H 2048 --I 1408 --topk 2 --routing skewed"
for run in "300 grouped_mixed w4a16_awq" "1024 grouped_mixed w8a16" "3 small_m w4a16_gptq_actorder" \
           "300 grouped_mixed w4a16_gptq_actorder" "300 grouped_gemm w4a16_gptq_actorder"; do
  set -- $run
  for tool in memcheck racecheck; do
    timeout 45 compute-sanitizer --tool $tool $C check --precision $3 $S --m $1 --path $2 > "$W/${tool}_$3_$2_m$1.txt" 2>&1
  done
done
echo "sanitizers $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
timeout 150 ncu --clock-control none --section SourceCounters --section WarpStateStats --import-source no \
  -k regex:wna16_grouped -c 1 -o "$W/gemm1" $C bench --shape mixtral_8x7b_tp1 --m 1024 --precision w4a16 \
  --path grouped_mixed --seconds 0.001 > "$W/ncu_log.txt" 2>&1
[ -f "$W/gemm1.ncu-rep" ] && ncu --import "$W/gemm1.ncu-rep" --page source --csv --print-source sass 2>"$W/ncu_src_err.txt" | gzip -9 > "$W/gemm1_sass.csv.gz"
rm -f "$W/gemm1.ncu-rep"
echo "done $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
cat "$W/info.txt"; grep -h "PASSED\|FAILED" "$W"/ctest_*.txt
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|^result\|invalid\|FAIL\|PASS" "$W"/*check_*.txt | sort | uniq -c
for pr in w4a16 w8a16; do for r in 1 2; do
  python3 scripts/bench_compare.py "$W/bench_${pr}_base_r$r.txt" "$W/bench_${pr}_cand_r$r.txt" --slower 1.001 | tail -11
done; done

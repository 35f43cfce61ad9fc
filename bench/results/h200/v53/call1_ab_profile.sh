#!/usr/bin/env bash
# v53 call 1 (v52's call5_producer_ab.sh with time guards and the int4 eight-tile switch):
# main at 62fb5d2 (build/carry/bins.tgz, final/) against the candidate (cand.tgz, cand/: v52's
# producer_copy_experiment.patch + v51's int4_eight_tiles_experiment.patch, which changes
# nothing unless FUSEDMOE_X_INT4_EIGHT is set). The candidate's mixed-path cases; grouped_mixed
# ABBA at M = 1024 / 4096; ncu source counters (per SASS instruction) of the candidate's
# GEMM1 at Mixtral M = 1024; the diagnostic build (diag.tgz, diag/: the candidate with
# FUSEDMOE_X_MIXED_DIAG bits 1 no x copies, 2 no dequantization, 4 no wgmma; wrong results, times
# only); int4's eight token tiles (FUSEDMOE_X_INT4_EIGHT unset / 24 / 12, ABBA); then
# compute-sanitizer while time is left.
set -o pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w1"; rm -rf "$W"; mkdir -p "$W"
mkdir -p /work 2>/dev/null && ln -sfn "$root" /work/main 2>/dev/null
export FUSEDMOE_SHAPES="$root/shapes/models.json"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
[ -x build/carry/final/fusedmoe ] || tar xzf build/carry/bins.tgz -C build/carry
[ -x build/carry/cand/fusedmoe ] || tar xzf build/carry/cand.tgz -C build/carry
[ -x build/carry/diag/fusedmoe ] || tar xzf build/carry/diag.tgz -C build/carry
A=$root/build/carry/final/fusedmoe; C=$root/build/carry/cand/fusedmoe; t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
timeout 100 $root/build/carry/cand/fusedmoe_gpu_tests --gtest_filter='Paths/QuantLayer.*/grouped_mixed' > "$W/ctest_mixed_cand.txt" 2>&1
echo "cand mixed cases rc=$? $(el) s" >> "$W/info.txt"
P="--path grouped_mixed --m 1024,4096"
for round in 1 2; do
  for v in $([ $round = 1 ] && echo "base cand" || echo "cand base"); do
    bin=$([ $v = base ] && echo $A || echo $C)
    for pr in w4a16 w8a16; do timeout 60 $bin bench --precision $pr $P > "$W/bench_${pr}_${v}_r$round.txt" 2>&1; done
  done
done
echo "ab $(el) s" >> "$W/info.txt"
timeout 150 ncu --clock-control none --section SourceCounters --section WarpStateStats --import-source no \
  -k regex:wna16_grouped -c 1 -o "$W/gemm1" $C bench --shape mixtral_8x7b_tp1 --m 1024 --precision w4a16 \
  --path grouped_mixed --seconds 0.001 > "$W/ncu_log.txt" 2>&1
[ -f "$W/gemm1.ncu-rep" ] && ncu --import "$W/gemm1.ncu-rep" --page source --csv --print-source sass 2>"$W/ncu_src_err.txt" | gzip -9 > "$W/gemm1_sass.csv.gz"
[ -f "$W/gemm1.ncu-rep" ] && ncu --import "$W/gemm1.ncu-rep" --page details --csv > "$W/gemm1_details.csv" 2>&1
rm -f "$W/gemm1.ncu-rep"
echo "ncu $(el) s" >> "$W/info.txt"
for d in 0 1 2 4 3 5 6; do
  FUSEDMOE_X_MIXED_DIAG=$d timeout 60 $root/build/carry/diag/fusedmoe bench --precision w4a16 --path grouped_mixed --m 1024 > "$W/diag_$d.txt" 2>&1
done
echo "diag $(el) s" >> "$W/info.txt"
for v in unset 24 12 12 24 unset; do
  if [ $v = unset ]; then env -u FUSEDMOE_X_INT4_EIGHT timeout 60 $C bench --precision w4a16 --m 64,128,256,512 > "$W/eight_${v}_$((n_$v++)).txt" 2>&1
  else FUSEDMOE_X_INT4_EIGHT=$v timeout 60 $C bench --precision w4a16 --m 64,128,256,512 > "$W/eight_${v}_$((n_$v++)).txt" 2>&1; fi
done
echo "eight $(el) s" >> "$W/info.txt"
S="--E 8 --H 2048 --I 1408 --topk 2 --routing skewed"
for run in "300 grouped_mixed w4a16_awq" "3 small_m w4a16_gptq_actorder" "300 grouped_mixed w4a16_gptq_actorder" \
           "1024 grouped_mixed w8a16" "300 grouped_gemm w4a16_gptq_actorder"; do
  set -- $run
  for tool in memcheck racecheck; do
    [ $(el) -gt 480 ] && { echo "skipped $tool $run (time)" >> "$W/info.txt"; continue; }
    timeout 45 compute-sanitizer --tool $tool $C check --precision $3 $S --m $1 --path $2 > "$W/${tool}_$3_$2_m$1.txt" 2>&1
    echo "$tool $run rc=$? $(el) s" >> "$W/info.txt"
  done
done
echo "done $(el) s" >> "$W/info.txt"
cat "$W/info.txt"; grep -h "PASSED\|FAILED" "$W"/ctest_*.txt
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|^result\|invalid\|FAIL\|PASS" "$W"/*check_*.txt 2>/dev/null | sort | uniq -c
for d in 1 2 4 3 5 6; do echo "diag $d against 0:"; python3 scripts/bench_compare.py "$W/diag_0.txt" "$W/diag_$d.txt" --slower 1.001 | tail -6; done
for v in 24 12; do for r in 0 1; do echo "int4 eight tiles above $v rows, round $r:"
  python3 scripts/bench_compare.py "$W/eight_unset_$r.txt" "$W/eight_${v}_$r.txt" --slower 1.001 | tail -22; done; done
for pr in w4a16 w8a16; do for r in 1 2; do
  python3 scripts/bench_compare.py "$W/bench_${pr}_base_r$r.txt" "$W/bench_${pr}_cand_r$r.txt" --slower 1.001 | tail -8
done; done

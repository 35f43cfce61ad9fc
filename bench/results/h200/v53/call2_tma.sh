#!/usr/bin/env bash
# v53 call 2: the mixed-input GEMM reading x's rows by TMA (x gathered in expert order first;
# build/carry/tma.tgz, tma/) against call 1's candidate (cand.tgz: the producer's copies at one
# multiply-add each): its GPU cases, compute-sanitizer, ABBA at M = 1024 / 4096, and ncu
# source counters of its GEMM1 (Mixtral M = 1024). Everything under $OUT/w2, packed in one tgz.
set -o pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w2"; rm -rf "$W"; mkdir -p "$W"
mkdir -p /work 2>/dev/null && ln -sfn "$root" /work/main 2>/dev/null
export FUSEDMOE_SHAPES="$root/shapes/models.json"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
for b in cand tma; do [ -x build/carry/$b/fusedmoe ] || tar xzf build/carry/$b.tgz -C build/carry; done
A=$root/build/carry/cand/fusedmoe; C=$root/build/carry/tma/fusedmoe; t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
timeout 150 $root/build/carry/tma/fusedmoe_gpu_tests --gtest_filter='Paths/QuantLayer.*/grouped_mixed:Paths/QuantLayer.*Graph*:QuantPrepare.*' > "$W/ctest_tma.txt" 2>&1
echo "tma cases rc=$? $(el) s" >> "$W/info.txt"
S="--E 8 --H 2048 --I 1408 --topk 2 --routing skewed"
for run in "300 w4a16_awq" "1024 w8a16" "300 w4a16_gptq_actorder"; do
  set -- $run
  for tool in memcheck racecheck; do
    timeout 60 compute-sanitizer --tool $tool $C check --precision $2 $S --m $1 --path grouped_mixed > "$W/${tool}_$2_m$1.txt" 2>&1
    echo "$tool $run rc=$? $(el) s" >> "$W/info.txt"
  done
done
P="--path grouped_mixed --m 1024,4096"
for round in 1 2; do
  for v in $([ $round = 1 ] && echo "cand tma" || echo "tma cand"); do
    bin=$([ $v = cand ] && echo $A || echo $C)
    for pr in w4a16 w8a16; do timeout 60 $bin bench --precision $pr $P > "$W/bench_${pr}_${v}_r$round.txt" 2>&1; done
  done
done
echo "ab $(el) s" >> "$W/info.txt"
timeout 150 ncu --clock-control none --section SourceCounters --section WarpStateStats --section SpeedOfLight --import-source no \
  -k regex:wna16_grouped -c 2 -o "$W/gemms" $C bench --shape mixtral_8x7b_tp1 --m 1024 --precision w4a16 \
  --path grouped_mixed --seconds 0.001 > "$W/ncu_log.txt" 2>&1
if [ -f "$W/gemms.ncu-rep" ]; then
  ncu --import "$W/gemms.ncu-rep" --page source --csv --print-source sass > "$W/gemms_sass.csv" 2>"$W/ncu_src_err.txt"
  ncu --import "$W/gemms.ncu-rep" --page details --csv > "$W/gemms_details.csv" 2>&1
  rm -f "$W/gemms.ncu-rep"
fi
echo "ncu $(el) s" >> "$W/info.txt"
cat "$W/info.txt"; grep -h "PASSED\|FAILED" "$W"/ctest_*.txt
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|^result" "$W"/*check_*.txt 2>/dev/null | cut -c1-60 | sort | uniq -c
grep -h "Duration\|Compute (SM) Throughput\|Memory Throughput" "$W/gemms_details.csv" 2>/dev/null | head -8
for pr in w4a16 w8a16; do for r in 1 2; do
  python3 scripts/bench_compare.py "$W/bench_${pr}_cand_r$r.txt" "$W/bench_${pr}_tma_r$r.txt" --slower 1.001 | tail -11
done; done
(cd "$OUT" && tar czf w2.tgz w2 && rm -rf w2)

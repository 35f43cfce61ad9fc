#!/usr/bin/env bash
# v53 call 3: the mixed-input GEMM's epilogue with the activation chosen once per tile
# (build/carry/tma2.tgz, tma2/) against call 2's TMA build (tma.tgz, tma/): its GPU cases,
# ABBA at M = 1024 / 4096; then tma2's grouped_mixed against auto (M = 128-4096, w4a16 and
# w8a16) for the planner's rule. Everything under $OUT/w3, packed in one tgz.
set -o pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w3"; rm -rf "$W"; mkdir -p "$W"
mkdir -p /work 2>/dev/null && ln -sfn "$root" /work/main 2>/dev/null
export FUSEDMOE_SHAPES="$root/shapes/models.json"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
for b in tma tma2; do [ -x build/carry/$b/fusedmoe ] || tar xzf build/carry/$b.tgz -C build/carry; done
A=$root/build/carry/tma/fusedmoe; C=$root/build/carry/tma2/fusedmoe; t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
timeout 150 $root/build/carry/tma2/fusedmoe_gpu_tests --gtest_filter='Paths/QuantLayer.*/grouped_mixed:Paths/QuantLayer.*Graph*:QuantPrepare.*' > "$W/ctest_tma2.txt" 2>&1
echo "tma2 cases rc=$? $(el) s" >> "$W/info.txt"
P="--path grouped_mixed --m 1024,4096"
for round in 1 2; do
  for v in $([ $round = 1 ] && echo "tma tma2" || echo "tma2 tma"); do
    bin=$([ $v = tma ] && echo $A || echo $C)
    for pr in w4a16 w8a16; do timeout 60 $bin bench --precision $pr $P > "$W/bench_${pr}_${v}_r$round.txt" 2>&1; done
  done
done
echo "ab $(el) s" >> "$W/info.txt"
for pr in w4a16 w8a16; do
  for path in auto grouped_mixed; do
    timeout 90 $C bench --precision $pr --path $path --m 128,256,512,1024,2048,4096 > "$W/rule_${pr}_${path}.txt" 2>&1
  done
done
echo "rule $(el) s" >> "$W/info.txt"
cat "$W/info.txt"; grep -h "PASSED\|FAILED" "$W"/ctest_*.txt
for pr in w4a16 w8a16; do for r in 1 2; do
  python3 scripts/bench_compare.py "$W/bench_${pr}_tma_r$r.txt" "$W/bench_${pr}_tma2_r$r.txt" --slower 1.001 | tail -11
done; done
for pr in w4a16 w8a16; do echo "$pr: grouped_mixed against auto"
  python3 scripts/bench_compare.py "$W/rule_${pr}_auto.txt" "$W/rule_${pr}_grouped_mixed.txt" --slower 1.001 | tail -31
  grep -h "^[a-z]" "$W/rule_${pr}_auto.txt" | awk '{print $1, $2, $3}' | tr '\n' ';'; echo
done
(cd "$OUT" && tar czf w3.tgz w3 && rm -rf w3)

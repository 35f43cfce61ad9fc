#!/usr/bin/env bash
# v53 call 4 (not run: no device): int4_eight_tiles_rule.patch (int4 on eight token tiles above
# 24 pairs per expert, as int8) built as build/carry/eight.tgz (eight/) against the same commit
# unpatched (build/carry/base.tgz, base/): the patched build's integer GPU cases (the first
# GPU run of int4's eight-tile kernels against the reference), then w4a16 / AWQ on auto at M =
# 64-512 ABBA. Everything under $OUT/w4, packed in one tgz.
set -o pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w4"; rm -rf "$W"; mkdir -p "$W"
mkdir -p /work 2>/dev/null && ln -sfn "$root" /work/main 2>/dev/null
export FUSEDMOE_SHAPES="$root/shapes/models.json"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
for b in base eight; do [ -x build/carry/$b/fusedmoe ] || tar xzf build/carry/$b.tgz -C build/carry; done
A=$root/build/carry/base/fusedmoe; C=$root/build/carry/eight/fusedmoe; t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
timeout 200 $root/build/carry/eight/fusedmoe_gpu_tests --gtest_filter='Paths/QuantLayer.*/small_m:QuantLayerAuto.*' > "$W/ctest_eight.txt" 2>&1
echo "eight cases rc=$? $(el) s" >> "$W/info.txt"
for pr in w4a16 w4a16_awq; do
  timeout 60 $C check --precision $pr --shape mixtral_8x7b_tp1 --m 128 > "$W/check_${pr}_mixtral_m128.txt" 2>&1
  timeout 60 $C check --precision $pr --shape llama4_scout_tp8 --m 512 > "$W/check_${pr}_scout_m512.txt" 2>&1
done
echo "checks $(el) s" >> "$W/info.txt"
for round in 1 2; do
  for v in $([ $round = 1 ] && echo "base eight" || echo "eight base"); do
    bin=$([ $v = base ] && echo $A || echo $C)
    timeout 90 $bin bench --precision w4a16 --m 64,128,256,512 > "$W/bench_${v}_r$round.txt" 2>&1
  done
done
echo "ab $(el) s" >> "$W/info.txt"
cat "$W/info.txt"; grep -h "PASSED\|FAILED" "$W"/ctest_*.txt; grep -h "^result" "$W"/check_*.txt | cut -c1-70
for r in 1 2; do python3 scripts/bench_compare.py "$W/bench_base_r$r.txt" "$W/bench_eight_r$r.txt" --slower 1.001 | tail -21; done
(cd "$OUT" && tar czf w4.tgz w4 && rm -rf w4)

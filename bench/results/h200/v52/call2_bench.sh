#!/usr/bin/env bash
# v52 call 2: the mixed-input GEMM (--path grouped_mixed) against auto (the GEMV below the
# crossover, the dequant path above) for w4a16 / w8a16, and act-order on auto against the
# dequant path it took at every M before v52. bins.tgz as call 1.
set -o pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w2"; rm -rf "$W"; mkdir -p "$W"
mkdir -p /work 2>/dev/null && ln -sfn "$root" /work/main 2>/dev/null
export FUSEDMOE_SHAPES="$root/shapes/models.json"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
[ -x build/carry/final/fusedmoe ] || tar xzf build/carry/bins.tgz -C build/carry
B=$root/build/carry/final/fusedmoe; t0=$(date +%s)
P="--m 256,1024,4096"
for pr in w4a16 w8a16; do
  for path in auto grouped_mixed; do
    timeout 110 $B bench --precision $pr --path $path $P > "$W/bench_${pr}_${path}.txt" 2>&1
    echo "$pr $path rc=$? $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
  done
done
A="--m 1,16,64,1024"
timeout 70 $B bench --precision w4a16_gptq_actorder --path auto $A > "$W/bench_actorder_auto.txt" 2>&1
timeout 70 $B bench --precision w4a16_gptq_actorder --path grouped_gemm $A > "$W/bench_actorder_dequant.txt" 2>&1
echo "act-order $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
cat "$W/info.txt"
for pr in w4a16 w8a16; do
  python3 scripts/bench_compare.py "$W/bench_${pr}_auto.txt" "$W/bench_${pr}_grouped_mixed.txt" --slower 1.001 | tail -20
done
python3 scripts/bench_compare.py "$W/bench_actorder_dequant.txt" "$W/bench_actorder_auto.txt" --slower 1.001 | tail -25

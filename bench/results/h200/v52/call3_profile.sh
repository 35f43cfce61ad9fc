#!/usr/bin/env bash
# v52 call 3: ncu of the mixed-input GEMM (w4a16 Mixtral M = 1024, the speed-of-light, warp
# state and memory sections), plain w4a16 at decode (act-order's gather cost), the swapped
# path's integer cases (call 1's filter left them out), compute-sanitizer on grouped_mixed.
set -o pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w3"; rm -rf "$W"; mkdir -p "$W"
mkdir -p /work 2>/dev/null && ln -sfn "$root" /work/main 2>/dev/null
export FUSEDMOE_SHAPES="$root/shapes/models.json"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
[ -x build/carry/final/fusedmoe ] || tar xzf build/carry/bins.tgz -C build/carry
B=$root/build/carry/final/fusedmoe; T=$root/build/carry/final/fusedmoe_gpu_tests; t0=$(date +%s)
OUT="$W/p" FUSEDMOE_BIN=$B PRECISION=w4a16 PATH_ARG=grouped_mixed DETAIL='wna16_grouped' \
  timeout 200 bash scripts/profile.sh mixtral_8x7b_tp1:1024 > /dev/null 2>&1
cp "$W/p/profile.txt" "$W/profile_w4a16_mixed.txt"; rm -rf "$W/p"
echo "profile $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
timeout 60 $B bench --precision w4a16 --m 1,16,64 > "$W/bench_w4a16_decode.txt" 2>&1
timeout 100 $T --gtest_filter='Paths/QuantLayer.*/grouped_swapped' > "$W/ctest_swapped.txt" 2>&1
echo "swapped rc=$? $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
for tool in memcheck racecheck; do
  timeout 90 compute-sanitizer --tool $tool $B check --precision w4a16_awq --E 8 --H 2880 --I 704 --topk 2 \
    --m 300 --routing skewed --path grouped_mixed > "$W/${tool}_mixed_m300.txt" 2>&1
  echo "$tool rc=$? $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
done
timeout 60 compute-sanitizer --tool memcheck $B check --precision w4a16_gptq_actorder --E 8 --H 2880 --I 704 --topk 2 \
  --m 3 --routing skewed --path small_m > "$W/memcheck_actorder_m3.txt" 2>&1
echo "done $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
cat "$W/info.txt"; grep -h "PASSED\|FAILED" "$W"/ctest_*.txt; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|result" "$W"/*check*.txt
tail -60 "$W/profile_w4a16_mixed.txt"

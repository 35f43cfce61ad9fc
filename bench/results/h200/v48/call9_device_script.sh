#!/usr/bin/env bash
# v48 call 9: `t6` = 6897d07 + wna16's four n-tiles above 6 pairs per expert (the landed rule,
# no switch): the integer suites on every path, QuantLayerAuto, SmallMSplitK; memcheck of a
# layer the rule moves to four n-tiles (Qwen2 M = 64, w8a16); bench w4a16 and w8a16 at M = 1-512.
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w9"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
B=build/carry/t6; t0=$(date +%s)
timeout 300 $B/fusedmoe_gpu_tests --gtest_filter='Paths/QuantLayer.*:QuantLayerAuto.*:SmallMSplitK.*' > "$W/ctest.txt" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$W/ctest.txt" | head -20
timeout 120 compute-sanitizer --tool memcheck $B/fusedmoe check --shape qwen2_57b_a14b_tp4 --m 64 --precision w8a16 > "$W/memcheck.txt" 2>&1
echo "memcheck rc=$? $(grep -h 'ERROR SUMMARY' "$W/memcheck.txt") $(grep -h '^result' "$W/memcheck.txt" | cut -c1-60)"
for prec in w4a16 w8a16; do $B/fusedmoe bench --precision $prec --m 1,2,4,8,16,32,64,128,256,512 > "$W/bench_${prec}_t6_r1.txt" 2>&1; done
echo "bench $(( $(date +%s) - t0 )) s"
for prec in w4a16 w8a16; do grep -E "^(mixtral|qwen|deepseek|llama)" "$W/bench_${prec}_t6_r1.txt" | awk -v p=$prec '{print p, $1, $2, $3, $4, $8, $9}'; done
tar czf "$OUT/call9.tgz" -C "$W" . && rm -rf "$W"

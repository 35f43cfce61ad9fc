#!/usr/bin/env bash
# v47 call 6: the final commit's CI release build (`final`): the fixed RoutingTopk test, the
# auto-path layer suites and both graph replays; the bf16 bench at every M, one round.
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w6"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
B=build/carry/final; t0=$(date +%s)
$B/fusedmoe info > "$W/info.txt" 2>&1; head -1 "$W/info.txt"
timeout 240 $B/fusedmoe_gpu_tests --gtest_filter='RoutingTopk.*:Sm90Device.*:DenseLayerAuto.*:Fp8LayerAuto.*:Paths/DenseLayer.CudaGraphReplaysWithNewRouting/*' > "$W/ctest.txt" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$W/ctest.txt" | head -20
$B/fusedmoe bench --precision bf16 > "$W/bench_bf16_final_r2.txt" 2>&1
echo "bench rc=$? $(( $(date +%s) - t0 )) s"
tar czf "$OUT/call6.tgz" -C "$W" . && rm -rf "$W"

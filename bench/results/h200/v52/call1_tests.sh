#!/usr/bin/env bash
# v52 call 1: the GPU suite on a release build of main made on the build machine and carried
# as build/carry/bins.tgz (final/fusedmoe, final/fusedmoe_gpu_tests). First the mixed-input
# GEMM's cases alone under a timeout (a pipeline bug hangs rather than fails), then the
# act-order cases, then the rest.
set -o pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w1"; rm -rf "$W"; mkdir -p "$W"
mkdir -p /work 2>/dev/null && ln -sfn "$root" /work/main 2>/dev/null  # the build's source path
export FUSEDMOE_SHAPES="$root/shapes/models.json"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
T=$root/build/carry/final/fusedmoe_gpu_tests; t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
timeout 150 $T --gtest_filter='Paths/QuantLayer.*/grouped_mixed' > "$W/ctest_mixed.txt" 2>&1
echo "mixed cases rc=$? $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
timeout 120 $T --gtest_filter='Paths/QuantLayer.*/small_m:Paths/QuantLayer.*/grouped_gemm:QuantPrepare.*:QuantLayerAuto.LargeBatch' > "$W/ctest_int.txt" 2>&1
echo "small_m, grouped_gemm, prepare rc=$? $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
timeout 280 $T --gtest_filter='-Paths/QuantLayer.*:QuantPrepare.*:QuantLayerAuto.LargeBatch' > "$W/ctest_rest.txt" 2>&1
echo "rest rc=$? $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
cat "$W/info.txt"
for f in "$W"/ctest_*.txt; do echo "== $f"; grep -E "^\[  FAILED|^\[  PASSED|tests ran|Failure|expected|Which is" "$f" | head -30; done

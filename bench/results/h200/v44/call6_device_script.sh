#!/usr/bin/env bash
# v44 call 6: 05a7fa3's CI release build (carried): the FP8 layer tests after the review commits.
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; mkdir -p "$OUT"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
T=build/carry/fusedmoe_gpu_tests
build/carry/fusedmoe info 2>&1 | head -1
timeout 300 $T --gtest_filter='Fp8LayerAuto.*:Fp8Quantize.*:Paths/Fp8Layer.*' > "$OUT/call6_ctest.txt" 2>&1
echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]|Gemm1Gathers" "$OUT/call6_ctest.txt" | head -12

#!/usr/bin/env bash
# Temporary (not committed): the landed commit: build, FP8 tests, memcheck, a full FP8 bench round.
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; mkdir -p "$OUT"
source scripts/device_build.sh
t0=$(date +%s)
{ configure_device_build build/device ON && cmake --build build/device -j 16 --target fusedmoe_cli fusedmoe_gpu_tests; } > "$OUT/build.log" 2>&1
rc=$?; echo "build rc=$rc $(( $(date +%s) - t0 )) s"
grep -c C7510 "$OUT/build.log" && { echo "C7510 found"; exit 1; }
[ $rc -eq 0 ] || { tail -40 "$OUT/build.log"; exit 1; }
T=build/device/tests/fusedmoe_gpu_tests; B=build/device/fusedmoe
timeout 200 $T --gtest_filter='Fp8LayerAuto.*:Fp8Quantize.*:Paths/Fp8Layer.EveryScalingModeOnBenchShapes/grouped_*:Paths/Fp8Layer.PartialBlocksEdgesAndModes/grouped_*' > "$OUT/ctest.txt" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]|^\[       OK \]" "$OUT/ctest.txt" | head -20
for prec in fp8_channel fp8_block; do
  /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 1 $B check --precision $prec --E 16 --H 640 --I 256 --topk 8 --m 300 > "$OUT/memcheck_$prec.txt" 2>&1
  echo "memcheck $prec rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ERROR SUMMARY|result" "$OUT/memcheck_$prec.txt" | head -3
done
for prec in fp8_tensor fp8_channel fp8_block; do
  $B bench --precision $prec > "$OUT/bench_$prec.txt" 2>&1
  echo "bench $prec rc=$? $(( $(date +%s) - t0 )) s"
done
for prec in fp8_tensor fp8_channel fp8_block; do echo "== $prec"; sed -n '3p' "$OUT/bench_$prec.txt"; awk '$2 ~ /^(256|512|1024|2048|4096)$/ {print $1, $2, $3, $4, $9, $10}' "$OUT/bench_$prec.txt"; done

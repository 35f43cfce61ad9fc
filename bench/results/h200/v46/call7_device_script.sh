#!/usr/bin/env bash
# v46 call 7: the final commit's CI release build (fusedmoe, fusedmoe_gpu_tests in
# build/carry/bins.tgz): the GPU tests its last commit touched (align, the quantizer tests'
# helpers, the device probe) and the layer suites through both align kernels; memcheck of a
# cooperative-align layer; the bench of bf16 and fp8_channel at every M, one round.
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w7"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
t0=$(date +%s)
build/carry/final/fusedmoe info > "$W/info.txt" 2>&1; head -1 "$W/info.txt"
T=build/carry/final/fusedmoe_gpu_tests
timeout 300 $T --gtest_filter='AlignTokens.*:Sm90Device.*:Fp8Quantize.*:Paths/DenseLayer.EdgeShapes/*:Paths/DenseLayer.CudaGraphReplaysWithNewRouting/*:DenseLayerAuto.*:Paths/Fp8Layer.CudaGraphReplaysWithNewRouting/*:Fp8LayerAuto.*' > "$W/ctest.txt" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]|^\[       OK \]" "$W/ctest.txt" | head -40
/usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 1 build/carry/final/fusedmoe check --precision bf16 --E 384 --H 256 --I 128 --topk 8 --m 700 > "$W/memcheck.txt" 2>&1
echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ERROR SUMMARY|result" "$W/memcheck.txt" | head -2
for prec in bf16 fp8_channel; do
  build/carry/final/fusedmoe bench --precision $prec > "$W/bench_${prec}_final_r1.txt" 2>&1
  echo "$prec rc=$? $(( $(date +%s) - t0 )) s"; tail -40 "$W/bench_${prec}_final_r1.txt" | grep -E "vllm|x " | head -0
done
tar czf "$OUT/call7.tgz" -C "$W" . && rm -rf "$W"

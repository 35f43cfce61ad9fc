#!/usr/bin/env bash
# v47 call 3: the rule by pairs per expert (grouped_gemms_launch_early: M * topk / E <= 32) in
# `final` (the working tree's build) against `exp` (call 1's experiment build with
# FUSEDMOE_GEMM_PDL=0: plain launches). GPU tests of final (the layer suites, graph replays),
# then the bench of bf16 and fp8_channel at M = 16-2048 in ABBA order, fp8_tensor and
# fp8_block one round each.
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w3"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
t0=$(date +%s)
F='Paths/DenseLayer.EdgeShapes/grouped*:Paths/DenseLayer.CudaGraphReplaysWithNewRouting/*:DenseLayerAuto.*:Paths/QuantLayer.EdgeShapesAndFp16/grouped*:Fp8LayerAuto.*:Paths/Fp8Layer.*/grouped*'
timeout 240 build/carry/final/fusedmoe_gpu_tests --gtest_filter="$F" > "$W/ctest.txt" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$W/ctest.txt" | head -20
M=16,32,64,128,256,512,1024,2048
for prec in bf16 fp8_channel; do
  for v in exp final final exp; do
    n=1; [ -f "$W/bench_${prec}_${v}_r1.txt" ] && n=2
    FUSEDMOE_GEMM_PDL=0 build/carry/$v/fusedmoe bench --precision $prec --m $M > "$W/bench_${prec}_${v}_r$n.txt" 2>&1
    echo "$prec $v r$n rc=$? $(( $(date +%s) - t0 )) s"
  done
done
for prec in fp8_tensor fp8_block; do
  for v in exp final; do
    FUSEDMOE_GEMM_PDL=0 build/carry/$v/fusedmoe bench --precision $prec --m $M > "$W/bench_${prec}_${v}_r1.txt" 2>&1
    echo "$prec $v rc=$? $(( $(date +%s) - t0 )) s"
  done
done
tar czf "$OUT/call3.tgz" -C "$W" . && rm -rf "$W"

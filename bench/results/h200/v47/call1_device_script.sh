#!/usr/bin/env bash
# v47 call 1: which overlap of the programmatic dependent GEMMs gains and which loses. One
# build (the working tree: pdl_gemm_kernel, GroupedGemmParams.launch_early /
# release_successor, set per GEMM by the experiment's FUSEDMOE_GEMM_PDL bits: 1 GEMM1
# launch_early, 2 GEMM1 release_successor, 4 GEMM2 launch_early, 8 GEMM2 release_successor).
# Variants: 0 none (the landed launches), 1 setup->GEMM1, 6 GEMM1->GEMM2, 4 GEMM2 early alone
# (FP8: after the activation's quantizer, which triggers at its start), 8 GEMM2->combine,
# 15 all (v46's patch). GPU tests at 15 and 0, memcheck and racecheck at 15, then the bench of
# bf16 and fp8_channel at M = 64-4096 in palindrome order.
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w1"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
B=build/carry/v47; t0=$(date +%s)
F='Paths/DenseLayer.EdgeShapes/grouped*:Paths/DenseLayer.Fp16ActivationsAndWeightOnInput/grouped*:Paths/DenseLayer.CudaGraphReplaysWithNewRouting/*:DenseLayerAuto.*:Paths/QuantLayer.EdgeShapesAndFp16/grouped*:Fp8LayerAuto.*:Paths/Fp8Layer.*/grouped*'
FUSEDMOE_GEMM_PDL=15 timeout 300 $B/fusedmoe_gpu_tests --gtest_filter="$F" > "$W/ctest_15.txt" 2>&1
echo "tests 15 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$W/ctest_15.txt" | head -20
FUSEDMOE_GEMM_PDL=0 timeout 200 $B/fusedmoe_gpu_tests --gtest_filter='DenseLayerAuto.*:Fp8LayerAuto.*:Paths/DenseLayer.CudaGraphReplaysWithNewRouting/*' > "$W/ctest_0.txt" 2>&1
echo "tests 0 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$W/ctest_0.txt" | head -20
for tool in memcheck racecheck; do
  FUSEDMOE_GEMM_PDL=15 /usr/local/cuda/bin/compute-sanitizer --tool $tool --error-exitcode 1 $B/fusedmoe check --precision bf16 --E 32 --H 1000 --I 256 --topk 4 --m 1537 --routing skewed > "$W/${tool}_bf16.txt" 2>&1
  echo "$tool bf16 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "SUMMARY|result" "$W/${tool}_bf16.txt" | head -2
done
FUSEDMOE_GEMM_PDL=15 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 1 $B/fusedmoe check --precision fp8_channel --E 16 --H 512 --I 256 --topk 4 --m 300 > "$W/memcheck_fp8.txt" 2>&1
echo "memcheck fp8 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "SUMMARY|result" "$W/memcheck_fp8.txt" | head -2
for v in 0 1 6 4 8 15 15 8 4 6 1 0; do
  [ $(( $(date +%s) - t0 )) -gt 470 ] && { echo "time: stop before $v"; break; }
  for prec in bf16 fp8_channel; do
    n=1; [ -f "$W/bench_${prec}_v${v}_r1.txt" ] && n=2
    FUSEDMOE_GEMM_PDL=$v $B/fusedmoe bench --precision $prec --m 64,256,1024,4096 > "$W/bench_${prec}_v${v}_r$n.txt" 2>&1
    echo "$prec v$v r$n rc=$? $(( $(date +%s) - t0 )) s"
  done
done
tar czf "$OUT/call1.tgz" -C "$W" . && rm -rf "$W"

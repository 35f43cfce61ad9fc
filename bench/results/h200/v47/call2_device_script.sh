#!/usr/bin/env bash
# v47 call 2: the rule (grouped_gemms_launch_early: up to 512 tokens both GEMMs launch early
# and GEMM2 releases the combine) in `final` (the working tree's build) against `exp` (call
# 1's experiment build with FUSEDMOE_GEMM_PDL=0: every GEMM a plain launch, as before v47).
# GPU tests of final (grouped bf16/fp16, FP8, integer suites, graph replays, align),
# memcheck and racecheck of small layers that launch early; the bench of bf16 and
# fp8_channel at every M in ABBA order, fp8_tensor, fp8_block and w4a16 one round each.
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w2"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
t0=$(date +%s)
F='AlignTokens.*:Sm90Device.*:Paths/DenseLayer.EdgeShapes/grouped*:Paths/DenseLayer.BenchShapesBf16/grouped*:Paths/DenseLayer.Fp16ActivationsAndWeightOnInput/grouped*:Paths/DenseLayer.CudaGraphReplaysWithNewRouting/*:DenseLayerAuto.*:Paths/QuantLayer.EdgeShapesAndFp16/grouped*:Fp8LayerAuto.*:Paths/Fp8Layer.*/grouped*'
timeout 300 build/carry/final/fusedmoe_gpu_tests --gtest_filter="$F" > "$W/ctest.txt" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$W/ctest.txt" | head -20
i=0
for args in "--precision bf16 --E 32 --H 1000 --I 256 --topk 4 --m 300 --routing skewed" "--precision fp8_channel --E 16 --H 512 --I 256 --topk 4 --m 300" "--precision fp8_block --E 16 --H 512 --I 256 --topk 4 --m 200" "--precision w4a16 --E 8 --H 512 --I 256 --topk 2 --m 500"; do
  i=$((i+1))
  /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 1 build/carry/final/fusedmoe check $args > "$W/memcheck_$i.txt" 2>&1
  echo "memcheck $i ($args) rc=$? $(( $(date +%s) - t0 )) s"; grep -E "SUMMARY|result" "$W/memcheck_$i.txt" | head -2
done
/usr/local/cuda/bin/compute-sanitizer --tool racecheck --error-exitcode 1 build/carry/final/fusedmoe check --precision bf16 --E 32 --H 1000 --I 256 --topk 4 --m 300 --routing skewed > "$W/racecheck.txt" 2>&1
echo "racecheck rc=$? $(( $(date +%s) - t0 )) s"; grep -E "SUMMARY|result" "$W/racecheck.txt" | head -2
for prec in bf16 fp8_channel; do
  for v in exp final final exp; do
    n=1; [ -f "$W/bench_${prec}_${v}_r1.txt" ] && n=2
    FUSEDMOE_GEMM_PDL=0 build/carry/$v/fusedmoe bench --precision $prec > "$W/bench_${prec}_${v}_r$n.txt" 2>&1
    echo "$prec $v r$n rc=$? $(( $(date +%s) - t0 )) s"
  done
done
for prec in fp8_tensor fp8_block w4a16; do
  for v in exp final; do
    FUSEDMOE_GEMM_PDL=0 build/carry/$v/fusedmoe bench --precision $prec --m 16,64,256,512,1024 > "$W/bench_${prec}_${v}_r1.txt" 2>&1
    echo "$prec $v rc=$? $(( $(date +%s) - t0 )) s"
  done
done
tar czf "$OUT/call2.tgz" -C "$W" . && rm -rf "$W"

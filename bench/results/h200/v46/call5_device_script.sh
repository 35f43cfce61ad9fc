#!/usr/bin/env bash
# v46 call 5: the CUTLASS grouped GEMMs as programmatic dependent launches (p: every
# sm90_*grouped_gemm_*.cu translation unit recompiled with pdl_gemm_kernel and the setup kernel
# triggering its successor at once, over g's other objects) against g (0f89ab6's code: align
# and gather), both linked here with the same tool and test objects (built in /tmp/rel) and
# carried in build/carry/bins.tgz. GPU tests on p (the grouped bf16/fp16, FP8 and integer
# suites, graph replays, 64-bit indexing), memcheck and racecheck of grouped layers; the
# bench of bf16 and fp8_channel in ABBA order (g, p, p, g), fp8_tensor, fp8_block and w4a16
# one round each.
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w5"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone; ln -sfn "$root" /tmp/rel
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
t0=$(date +%s)
T=build/carry/p/fusedmoe_gpu_tests
timeout 300 $T --gtest_filter='AlignTokens.*:Paths/DenseLayer.EdgeShapes/grouped*:Paths/DenseLayer.BenchShapesBf16/grouped*:Paths/DenseLayer.Fp16ActivationsAndWeightOnInput/grouped*:Paths/DenseLayer.CudaGraphReplaysWithNewRouting/*:Paths/DenseLayer.SixtyFourBitIndexing/grouped_gemm:DenseLayerAuto.*:Paths/QuantLayer.EdgeShapesAndFp16/grouped*:Fp8LayerAuto.*:Paths/Fp8Layer.*/grouped*' > "$W/ctest.txt" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]|^\[       OK \]" "$W/ctest.txt" | head -40
i=0
for args in "--precision bf16 --E 32 --H 1000 --I 256 --topk 4 --m 1537 --routing skewed" "--precision fp8_block --E 16 --H 512 --I 256 --topk 4 --m 300" "--precision w4a16 --E 8 --H 512 --I 256 --topk 2 --m 600"; do
  i=$((i+1))
  /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 1 build/carry/p/fusedmoe check $args > "$W/memcheck_$i.txt" 2>&1
  echo "memcheck $i ($args) rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ERROR SUMMARY|result" "$W/memcheck_$i.txt" | head -2
done
/usr/local/cuda/bin/compute-sanitizer --tool racecheck --error-exitcode 1 build/carry/p/fusedmoe check --precision bf16 --E 32 --H 1000 --I 256 --topk 4 --m 1537 --routing skewed > "$W/racecheck.txt" 2>&1
echo "racecheck rc=$? $(( $(date +%s) - t0 )) s"; grep -E "RACECHECK SUMMARY|result" "$W/racecheck.txt" | head -2
for prec in bf16 fp8_channel; do
  for v in g p p g; do
    n=1; [ -f "$W/bench_${prec}_${v}_r1.txt" ] && n=2
    build/carry/$v/fusedmoe bench --precision $prec --m 1,4,16,64,256,1024,4096 > "$W/bench_${prec}_${v}_r$n.txt" 2>&1
    echo "$prec $v r$n rc=$? $(( $(date +%s) - t0 )) s"
  done
done
for prec in fp8_tensor fp8_block w4a16; do
  for v in g p; do
    build/carry/$v/fusedmoe bench --precision $prec --m 64,256,1024,4096 > "$W/bench_${prec}_${v}_r1.txt" 2>&1
    echo "$prec $v rc=$? $(( $(date +%s) - t0 )) s"
  done
done
tar czf "$OUT/call5.tgz" -C "$W" . && rm -rf "$W"

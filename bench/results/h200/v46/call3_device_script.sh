#!/usr/bin/env bash
# v46 call 3: the gather with four vectors per thread (g: call 2's cand plus permute.cu) against
# call 2's cand (a: align as one cooperative launch only), both in build/carry/bins.tgz. GPU
# tests on g (the gather's suites, 64-bit indexing, the align tests), memcheck of a gathering
# layer; the bench of bf16 in ABBA order (a, g, g, a), w4a16 one round each; ncu of the gather.
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w3"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
t0=$(date +%s)
T=build/carry/g/fusedmoe_gpu_tests
timeout 300 $T --gtest_filter='AlignTokens.*:Paths/DenseLayer.EdgeShapes/grouped*:Paths/DenseLayer.BenchShapesBf16/grouped*:Paths/DenseLayer.SixtyFourBitIndexing/grouped_gemm:DenseLayerAuto.*:Paths/QuantLayer.EdgeShapesAndFp16/grouped_gemm' > "$W/ctest.txt" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]|^\[       OK \]" "$W/ctest.txt" | head -30
C="--precision bf16 --E 32 --H 1000 --I 128 --topk 4 --m 1537 --routing skewed --path grouped_gemm"
/usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 1 build/carry/g/fusedmoe check $C > "$W/memcheck.txt" 2>&1
echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ERROR SUMMARY|result" "$W/memcheck.txt" | head -2
for v in a g g a; do
  n=1; [ -f "$W/bench_bf16_${v}_r1.txt" ] && n=2
  build/carry/$v/fusedmoe bench --precision bf16 --m 256,1024,2048,4096 > "$W/bench_bf16_${v}_r$n.txt" 2>&1
  echo "bf16 $v r$n rc=$? $(( $(date +%s) - t0 )) s"
done
for v in a g; do
  build/carry/$v/fusedmoe bench --precision w4a16 --m 1024,4096 > "$W/bench_w4a16_${v}_r1.txt" 2>&1
  echo "w4a16 $v rc=$? $(( $(date +%s) - t0 )) s"
done
for v in a g; do
  ncu --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum -k regex:gather -c 2 build/carry/$v/fusedmoe bench --shape qwen2_57b_a14b_tp4 --m 1024 --precision bf16 --seconds 0.001 > "$W/ncu_gather_$v.txt" 2>&1
  echo "ncu gather $v: $(grep -E 'gpu__time|dram__bytes' "$W/ncu_gather_$v.txt" | awk '{print $1, $NF}' | tr '\n' ';')"
done
tar czf "$OUT/call3.tgz" -C "$W" . && rm -rf "$W"

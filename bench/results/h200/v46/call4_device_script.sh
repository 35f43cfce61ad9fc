#!/usr/bin/env bash
# v46 call 4: the combine with four / two (token, vector) items per thread at top-1 / top-2 and
# the gated activation with two vectors per thread (c: call 3's g plus permute.cu) against call
# 3's g (align and gather), both in build/carry/bins.tgz. GPU tests on c (every suite that runs
# the combine or the gated activation at edge shapes), memcheck of top-1 / top-2 / per-tensor
# layers; the bench of bf16 and fp8_tensor in ABBA order (g, c, c, g); ncu of the combine and
# the gated activation.
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w4"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
t0=$(date +%s)
T=build/carry/c/fusedmoe_gpu_tests
timeout 300 $T --gtest_filter='Paths/DenseLayer.EdgeShapes/*:Paths/DenseLayer.Fp16ActivationsAndWeightOnInput/*:Paths/DenseLayer.CudaGraphReplaysWithNewRouting/*:Paths/Fp8Layer.PartialBlocksEdgesAndModes/*:Paths/Fp8Layer.CudaGraphReplaysWithNewRouting/*:Paths/QuantLayer.EdgeShapesAndFp16/*:Fp8LayerAuto.*' > "$W/ctest.txt" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]|^\[       OK \]" "$W/ctest.txt" | head -40
i=0
for args in "--precision bf16 --E 16 --H 1000 --I 256 --topk 1 --m 777 --routing skewed" "--precision bf16 --E 8 --H 520 --I 256 --topk 2 --m 301" "--precision fp8_tensor --E 16 --H 512 --I 256 --topk 4 --m 300"; do
  i=$((i+1))
  /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 1 build/carry/c/fusedmoe check $args > "$W/memcheck_$i.txt" 2>&1
  echo "memcheck $i ($args) rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ERROR SUMMARY|result" "$W/memcheck_$i.txt" | head -2
done
for prec in bf16 fp8_tensor; do
  for v in g c c g; do
    n=1; [ -f "$W/bench_${prec}_${v}_r1.txt" ] && n=2
    build/carry/$v/fusedmoe bench --precision $prec --m 1,4,16,64,256,1024,4096 > "$W/bench_${prec}_${v}_r$n.txt" 2>&1
    echo "$prec $v r$n rc=$? $(( $(date +%s) - t0 )) s"
  done
done
for v in g c; do
  for pt in "llama4_scout_tp8 1024 bf16" "mixtral_8x7b_tp1 4096 bf16" "qwen3_30b_a3b_tp1 1024 fp8_tensor"; do
    set -- $pt
    ncu --metrics gpu__time_duration.sum -k regex:'combine|gated' -c 4 build/carry/$v/fusedmoe bench --shape $1 --m $2 --precision $3 --seconds 0.001 > "$W/ncu_${v}_$1_$2_$3.txt" 2>&1
    echo "ncu $v $pt: $(awk '/(combine|gated)_/{k=$2} /gpu__time/{print k, $NF}' "$W/ncu_${v}_$1_$2_$3.txt" | tr '\n' ';')"
  done
done
tar czf "$OUT/call4.tgz" -C "$W" . && rm -rf "$W"

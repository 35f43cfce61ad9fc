#!/usr/bin/env bash
# v45 call 3: dd5faaa's CI release build (build/carry/final: the scale prefetch behind the
# planner's fp8_prefetches_weight_scales) against e749132's (build/carry/base), both carried
# in build/carry/bins.tgz. GPU tests on the final build (the FP8 suites; the bf16/fp16 grouped
# suites whose kernels' host arguments were rewritten), memcheck; the bench of fp8_channel and
# fp8_tensor in ABBA order (base, final, final, base), bf16 one round each.
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w3"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
t0=$(date +%s)
build/carry/final/fusedmoe info > "$W/info.txt" 2>&1; head -1 "$W/info.txt"
T=build/carry/final/fusedmoe_gpu_tests
timeout 300 $T --gtest_filter='Fp8LayerAuto.*:Fp8Quantize.*:Paths/Fp8Layer.*' > "$W/ctest_fp8.txt" 2>&1
echo "fp8 tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$W/ctest_fp8.txt" | head -12
timeout 200 $T --gtest_filter='Paths/DenseLayer.EdgeShapes/*:Paths/DenseLayer.Fp16ActivationsAndWeightOnInput/*:Paths/DenseLayer.CudaGraphReplaysWithNewRouting/*:DenseLayerAuto.*' > "$W/ctest_dense.txt" 2>&1
echo "dense tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$W/ctest_dense.txt" | head -12
i=0
for args in "--precision fp8_channel --E 64 --H 640 --I 256 --topk 8 --m 700" "--precision fp8_channel --E 16 --H 4096 --I 256 --topk 8 --m 60"; do
  i=$((i+1))
  /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 1 build/carry/final/fusedmoe check $args > "$W/memcheck_$i.txt" 2>&1
  echo "memcheck $i ($args) rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ERROR SUMMARY|result" "$W/memcheck_$i.txt" | head -2
done
for prec in fp8_channel fp8_tensor; do
  for v in base final final base; do
    n=1; [ -f "$W/bench_${prec}_${v}_r1.txt" ] && n=2
    build/carry/$v/fusedmoe bench --precision $prec --m 64,256,1024,2048,4096 > "$W/bench_${prec}_${v}_r$n.txt" 2>&1
    echo "$prec $v r$n rc=$? $(( $(date +%s) - t0 )) s"
  done
done
for v in base final; do
  build/carry/$v/fusedmoe bench --precision bf16 --m 64,256,1024,4096 > "$W/bench_bf16_${v}_r1.txt" 2>&1
  echo "bf16 $v rc=$? $(( $(date +%s) - t0 )) s"
done
# GEMM2 alone at Qwen3 M = 1024 (64-row tiles, k = 768), per-channel against per-tensor: the
# epilogue's column vector (PERF.md v45), warp states and scheduler (final; no prefetch at k = 768).
for prec in fp8_channel fp8_tensor; do
  ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section LaunchStats \
    --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' -k regex:device_kernel --launch-skip 1 -c 1 \
    build/carry/final/fusedmoe bench --shape qwen3_30b_a3b_tp1 --m 1024 --precision $prec --seconds 0.001 > "$W/ncu_gemm2_qwen3_1024_$prec.txt" 2>&1
  echo "ncu qwen3 gemm2 $prec: $(grep -E 'Duration' "$W/ncu_gemm2_qwen3_1024_$prec.txt" | head -1)"
done
python3 - "$W" <<'PY' | tee "$W/summary.txt"
import sys, glob, re, statistics, collections
w = sys.argv[1]
t = collections.defaultdict(list)
for f in glob.glob(w + "/bench_*_r*.txt"):
    m = re.match(r".*/bench_(fp8_[a-z]+|bf16)_(base|final)_r(\d)\.txt", f)
    prec, v = m.group(1), m.group(2)
    for line in open(f):
        p = line.split()
        if len(p) > 4 and p[1].isdigit():
            t[(prec, p[0], int(p[1]), v)].append(float(p[3]))
print("prec shape m base_us final_us final/base (median of the rounds: ABBA for FP8, one for bf16)")
for prec, shape, mm in sorted({(k[0], k[1], k[2]) for k in t}):
    b = statistics.median(t[(prec, shape, mm, "base")]); c = statistics.median(t[(prec, shape, mm, "final")])
    print(f"{prec:11s} {shape:18s} {mm:5d} {b:8.1f} {c:8.1f} {c/b:6.3f}")
PY
tar czf "$OUT/call3.tgz" -C "$W" . && rm -rf "$W"

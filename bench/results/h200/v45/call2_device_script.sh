#!/usr/bin/env bash
# v45 call 2: three CI-style release builds carried: e749132 (build/carry/base); v2, the
# epilogue-scaled FP8 GEMMs' producer prefetching each tile's slice of the weights' scales from
# the kernel's parameters alone (build/carry/v2); v3, v2 plus those GEMMs letting their
# successor launch (griddepcontrol.launch_dependents in the producer) and the activation's
# quantizer launched after GEMM1 as a programmatic dependent (build/carry/cand, with its GPU
# tests). FP8 tests and memcheck on v3; the bench interleaved, two rounds; ncu of DeepSeek-V3
# TP8 M = 4096's GEMM2.
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w2"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
t0=$(date +%s)
timeout 300 build/carry/cand/fusedmoe_gpu_tests --gtest_filter='Fp8LayerAuto.*:Fp8Quantize.*:Paths/Fp8Layer.*' > "$W/ctest_v3.txt" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$W/ctest_v3.txt" | head -12
i=0
for args in "--precision fp8_channel --E 64 --H 640 --I 256 --topk 8 --m 700" "--precision fp8_tensor --E 16 --H 4096 --I 256 --topk 8 --m 60" "--precision fp8_channel --E 8 --H 4096 --I 512 --topk 2 --m 40"; do
  i=$((i+1))
  for tool in memcheck; do
    /usr/local/cuda/bin/compute-sanitizer --tool $tool --error-exitcode 1 build/carry/cand/fusedmoe check $args > "$W/${tool}_$i.txt" 2>&1
    echo "$tool $i ($args) rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ERROR SUMMARY|result" "$W/${tool}_$i.txt" | head -2
  done
done
for round in 1 2; do
  for prec in fp8_channel fp8_tensor; do
    for v in base v2 cand; do
      build/carry/$v/fusedmoe bench --precision $prec --m 64,256,1024,2048,4096 > "$W/bench_${prec}_${v}_r$round.txt" 2>&1
      echo "r$round $prec $v rc=$? $(( $(date +%s) - t0 )) s"
    done
  done
done
for v in base v2 cand; do
  ncu --clock-control none --metrics gpu__time_duration.sum -k regex:device_kernel --launch-skip 1 -c 1 \
    build/carry/$v/fusedmoe bench --shape deepseek_v3_tp8 --m 4096 --precision fp8_channel --seconds 0.001 > "$W/ncu_gemm2_fp8_channel_$v.txt" 2>&1
  echo "ncu gemm2 fp8_channel $v: $(grep -E 'gpu__time_duration' "$W/ncu_gemm2_fp8_channel_$v.txt" | tail -1)"
done
python3 - "$W" <<'PY' | tee "$W/summary.txt"
import sys, glob, re, statistics, collections
w = sys.argv[1]
t = collections.defaultdict(list)
for f in glob.glob(w + "/bench_*_r*.txt"):
    m = re.match(r".*/bench_(fp8_[a-z]+)_(base|v2|cand)_r(\d)\.txt", f)
    prec, v = m.group(1), m.group(2)
    for line in open(f):
        p = line.split()
        if len(p) > 4 and p[1].isdigit():
            t[(prec, p[0], int(p[1]), v)].append(float(p[3]))
print("prec shape m base_us v2_us v3_us v2/base v3/base (median of two rounds)")
for prec, shape, mm in sorted({(k[0], k[1], k[2]) for k in t}):
    b, v2, v3 = (statistics.median(t[(prec, shape, mm, v)]) for v in ("base", "v2", "cand"))
    print(f"{prec:11s} {shape:18s} {mm:5d} {b:8.1f} {v2:8.1f} {v3:8.1f} {v2/b:6.3f} {v3/b:6.3f}")
PY
tar czf "$OUT/call2.tgz" -C "$W" . && rm -rf "$W"

#!/usr/bin/env bash
# v46 call 1: align as one cooperative launch (cand: 6795675's CI release build with
# smxx_align_tokens.cu and planner.cpp recompiled, the GPU tests with align_test.cpp and
# layer_test.cpp) against 6795675's CI release build (base), both in build/carry/bins.tgz.
# GPU tests on cand, memcheck and racecheck of a chunked layer, the bench in ABBA order (base,
# cand, cand, base) for bf16 and fp8_channel, and an nsys probe.
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w1"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
t0=$(date +%s)
build/carry/cand/fusedmoe info > "$W/info.txt" 2>&1; head -1 "$W/info.txt"
(which nsys; ls /usr/local/cuda/bin | grep -i nsys; ls /opt/nvidia 2>/dev/null) > "$W/nsys_probe.txt" 2>&1; echo "nsys: $(head -3 "$W/nsys_probe.txt" | tr '\n' ' ')"
T=build/carry/cand/fusedmoe_gpu_tests
timeout 240 $T --gtest_filter='AlignTokens.*:Paths/DenseLayer.CudaGraphReplaysWithNewRouting/*:Paths/DenseLayer.EdgeShapes/*:DenseLayerAuto.*:Paths/Fp8Layer.CudaGraphReplaysWithNewRouting/*' > "$W/ctest.txt" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]|^\[       OK \]" "$W/ctest.txt" | head -30
C="--precision bf16 --E 32 --H 256 --I 128 --topk 4 --m 1537 --routing skewed"
/usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 1 build/carry/cand/fusedmoe check $C > "$W/memcheck.txt" 2>&1
echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ERROR SUMMARY|result" "$W/memcheck.txt" | head -2
/usr/local/cuda/bin/compute-sanitizer --tool racecheck --error-exitcode 1 build/carry/cand/fusedmoe check $C > "$W/racecheck.txt" 2>&1
echo "racecheck rc=$? $(( $(date +%s) - t0 )) s"; grep -E "HAZARD|ERROR SUMMARY|RACECHECK SUMMARY" "$W/racecheck.txt" | head -2
for prec in bf16 fp8_channel; do
  for v in base cand cand base; do
    n=1; [ -f "$W/bench_${prec}_${v}_r1.txt" ] && n=2
    build/carry/$v/fusedmoe bench --precision $prec --m 256,1024,2048,4096 > "$W/bench_${prec}_${v}_r$n.txt" 2>&1
    echo "$prec $v r$n rc=$? $(( $(date +%s) - t0 )) s"
  done
done
# Each align kernel alone (cold L2): Qwen3 M = 1024 and DeepSeek-V3 TP8 M = 4096, bf16.
for v in base cand; do
  for pt in "qwen3_30b_a3b_tp1 1024" "deepseek_v3_tp8 4096"; do
    set -- $pt
    ncu --metrics gpu__time_duration.sum -k regex:align -c 6 build/carry/$v/fusedmoe bench --shape $1 --m $2 --precision bf16 --seconds 0.001 > "$W/ncu_align_${v}_$1_$2.txt" 2>&1
    echo "ncu align $v $1 $2: $(grep -E 'align_|gpu__time' "$W/ncu_align_${v}_$1_$2.txt" | awk '/align_/{k=$1} /gpu__time/{print k, $NF}' | head -6 | tr '\n' ';')"
  done
done
python3 - "$W" <<'PY' | tee "$W/summary.txt"
import sys, glob, re, statistics, collections
w = sys.argv[1]
t = collections.defaultdict(list)
for f in glob.glob(w + "/bench_*_r*.txt"):
    m = re.match(r".*/bench_(fp8_[a-z]+|bf16)_(base|cand)_r(\d)\.txt", f)
    prec, v = m.group(1), m.group(2)
    for line in open(f):
        p = line.split()
        if len(p) > 4 and p[1].isdigit():
            t[(prec, p[0], int(p[1]), v)].append(float(p[3]))
print("prec shape m base_us cand_us cand/base (median of two rounds, ABBA)")
for prec, shape, mm in sorted({(k[0], k[1], k[2]) for k in t}):
    b = statistics.median(t[(prec, shape, mm, "base")]); c = statistics.median(t[(prec, shape, mm, "cand")])
    print(f"{prec:11s} {shape:18s} {mm:5d} {b:8.1f} {c:8.1f} {c/b:6.3f}")
PY
tar czf "$OUT/call1.tgz" -C "$W" . && rm -rf "$W"

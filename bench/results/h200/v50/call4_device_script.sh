#!/usr/bin/env bash
# v50 call 4: cand (whole-sector int8 copies, main's rules) against cand2 (+ int8 path rule
# {112, 64, 112} and one-tile split rule as int4's), w8a16 ABBA; integer GPU suites on cand2.
set -o pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w4"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/rel
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
A=$root/build/carry/cand/fusedmoe; C=$root/build/carry/cand2/fusedmoe; T=$root/build/carry/cand2/fusedmoe_gpu_tests; t0=$(date +%s)
$T --gtest_filter='Paths/QuantLayer.*:QuantLayerAuto.*:SmallMSplitK.*' > "$W/ctest_int.txt" 2>&1; echo "int suites rc=$? $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
$A bench --precision w8a16 > "$W/bench_w8a16_base_r1.txt" 2>&1
$C bench --precision w8a16 > "$W/bench_w8a16_cand_r1.txt" 2>&1
$C bench --precision w8a16 > "$W/bench_w8a16_cand_r2.txt" 2>&1
$A bench --precision w8a16 > "$W/bench_w8a16_base_r2.txt" 2>&1
echo "done $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
cat "$W/info.txt"; grep -h "PASSED\|FAILED" "$W/ctest_int.txt" | tail -8
python3 - "$W" <<'PY'
import sys, glob, statistics
W = sys.argv[1]
def load(f):
    d = {}
    for l in open(f):
        p = l.split()
        if len(p) > 8 and p[1].isdigit():
            d[(p[0], int(p[1]))] = (float(p[3]), p[2])
    return d
A = [load(f) for f in sorted(glob.glob(f"{W}/bench_w8a16_base_r*.txt"))]
C = [load(f) for f in sorted(glob.glob(f"{W}/bench_w8a16_cand_r*.txt"))]
for k in A[0]:
    a = statistics.median(x[k][0] for x in A); c = statistics.median(x[k][0] for x in C)
    flag = "" if abs(c / a - 1) < 0.01 else " *"
    print(f"{k[0]:22s} {k[1]:5d} {A[0][k][1]:>14s} {a:8.1f} {C[0][k][1]:>14s} {c:8.1f} ratio {c / a:.3f}{flag}")
PY
tar czf "$OUT/call4.tgz" -C "$W" . && rm -rf "$W"

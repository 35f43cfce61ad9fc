#!/usr/bin/env bash
# v50 call 2: base = main f72f244, cand = + whole-sector int8 code copies (ring_slot). Integer GPU
# suites and sanitizers on cand, ncu of w8a16 decode on cand, w8a16 bench ABBA, w4a16 one round each.
set -o pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w2"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/rel
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
A=$root/build/carry/base/fusedmoe; C=$root/build/carry/cand/fusedmoe; T=$root/build/carry/cand/fusedmoe_gpu_tests; t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
$T --gtest_filter='Paths/QuantLayer.*:QuantLayerAuto.*:SmallMSplitK.*' > "$W/ctest_int.txt" 2>&1; echo "int suites rc=$? $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
compute-sanitizer --tool memcheck $C check --precision w8a16_gptq --E 8 --H 2944 --I 640 --topk 2 --m 300 --routing skewed --path small_m > "$W/memcheck_m300.txt" 2>&1
compute-sanitizer --tool racecheck $C check --precision w8a16_gptq --E 8 --H 2944 --I 640 --topk 2 --m 300 --routing skewed --path small_m > "$W/racecheck_m300.txt" 2>&1
compute-sanitizer --tool memcheck $C check --precision w8a16_gptq --E 8 --H 2944 --I 640 --topk 2 --m 3 --path small_m > "$W/memcheck_m3.txt" 2>&1
compute-sanitizer --tool racecheck $C check --precision w8a16_gptq --E 8 --H 2944 --I 640 --topk 2 --m 3 --path small_m > "$W/racecheck_m3.txt" 2>&1
compute-sanitizer --tool synccheck $C check --precision w8a16_gptq --E 8 --H 2944 --I 640 --topk 2 --m 3 --path small_m > "$W/synccheck_m3.txt" 2>&1
$C check --precision w8a16_gptq --shape mixtral_8x7b_tp1 --m 1 > "$W/check_mixtral1.txt" 2>&1
$C check --precision w8a16_gptq --shape qwen3_30b_a3b_tp1 --m 16 > "$W/check_qwen3_16.txt" 2>&1
echo "sanitizers $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
OUT="$W/p" FUSEDMOE_BIN=$C PRECISION=w8a16 DETAIL='gemv' bash scripts/profile.sh mixtral_8x7b_tp1:1 qwen3_30b_a3b_tp1:16 > /dev/null 2>&1
cp "$W/p/profile.txt" "$W/profile_w8a16_cand.txt"; rm -rf "$W/p"
echo "profile $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
$A bench --precision w8a16 > "$W/bench_w8a16_base_r1.txt" 2>&1
$C bench --precision w8a16 > "$W/bench_w8a16_cand_r1.txt" 2>&1
$C bench --precision w8a16 > "$W/bench_w8a16_cand_r2.txt" 2>&1
$A bench --precision w8a16 > "$W/bench_w8a16_base_r2.txt" 2>&1
$A bench --precision w4a16 > "$W/bench_w4a16_base_r1.txt" 2>&1
$C bench --precision w4a16 > "$W/bench_w4a16_cand_r1.txt" 2>&1
echo "done $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
cat "$W/info.txt"; grep -h "PASSED\|FAILED" "$W/ctest_int.txt" | tail -8; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|result" "$W"/*check_*.txt
grep -h "us  read\|==\|L2 Cache Throughput\|DRAM Throughput\|lts__t_bytes" "$W/profile_w8a16_cand.txt"
python3 - "$W" <<'PY'
import sys, glob, os, statistics
W = sys.argv[1]
def load(f):
    d = {}
    for l in open(f):
        p = l.split()
        if len(p) > 8 and p[1].isdigit():
            d[(p[0], int(p[1]))] = float(p[3])
    return d
for prec in ("w8a16", "w4a16"):
    A = [load(f) for f in sorted(glob.glob(f"{W}/bench_{prec}_base_r*.txt"))]
    C = [load(f) for f in sorted(glob.glob(f"{W}/bench_{prec}_cand_r*.txt"))]
    for k in A[0]:
        a = statistics.median(x[k] for x in A); c = statistics.median(x[k] for x in C)
        print(f"{prec} {k[0]:22s} {k[1]:5d} base {a:8.1f} cand {c:8.1f} ratio {c / a:.3f}")
PY
tar czf "$OUT/call2.tgz" -C "$W" . && rm -rf "$W"

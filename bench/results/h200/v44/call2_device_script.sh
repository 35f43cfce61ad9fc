#!/usr/bin/env bash
# v44 call 2: the FP8 GEMM1 that reads x's e4m3 codes by token (working tree of d695597 + the
# gathering change, carried CI-style release build, with a temporary FUSEDMOE_FP8_GATHER=on|off
# switch over fp8_gemm1_gathers' shape rule, not committed): GPU tests under the rule, forced
# on and forced off; memcheck; an on/off A/B of the layer, two rounds.
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; mkdir -p "$OUT"; W="$OUT/w"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
B=build/carry/fusedmoe; T=build/carry/fusedmoe_gpu_tests
t0=$(date +%s)
$B info > "$W/info.txt" 2>&1; head -2 "$W/info.txt"
summary() { grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$1" | head -12; }
timeout 300 $T --gtest_filter='Fp8LayerAuto.*:Fp8Quantize.*:Paths/Fp8Layer.*' > "$W/ctest_rule.txt" 2>&1
echo "tests (rule) rc=$? $(( $(date +%s) - t0 )) s"; summary "$W/ctest_rule.txt"
FUSEDMOE_FP8_GATHER=on timeout 200 $T --gtest_filter='Fp8LayerAuto.*:Paths/Fp8Layer.*/grouped_gemm' > "$W/ctest_on.txt" 2>&1
echo "tests (on) rc=$? $(( $(date +%s) - t0 )) s"; summary "$W/ctest_on.txt"
FUSEDMOE_FP8_GATHER=off timeout 200 $T --gtest_filter='Fp8LayerAuto.*:-Fp8LayerAuto.Gemm1GathersXCodesByToken' > "$W/ctest_off.txt" 2>&1
echo "tests (off) rc=$? $(( $(date +%s) - t0 )) s"; summary "$W/ctest_off.txt"
for prec in fp8_channel fp8_tensor; do
  /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 1 $B check --precision $prec --E 16 --H 640 --I 256 --topk 8 --m 300 > "$W/memcheck_$prec.txt" 2>&1
  echo "memcheck $prec rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ERROR SUMMARY|result|PASS|FAIL" "$W/memcheck_$prec.txt" | head -3
done
for round in 1 2; do
  for prec in fp8_channel fp8_tensor; do
    for mode in on off; do
      FUSEDMOE_FP8_GATHER=$mode $B bench --precision $prec --m 64,128,256,512,1024,2048,4096 > "$W/bench_${prec}_${mode}_r$round.txt" 2>&1
      echo "r$round $prec $mode rc=$? $(( $(date +%s) - t0 )) s"
    done
  done
done
$B bench --precision fp8_channel --m 64,128,256,512,1024,2048,4096 > "$W/bench_fp8_channel_rule.txt" 2>&1
python3 - "$W" <<'PY' | tee "$W/summary.txt"
import sys, glob, re, statistics, collections
w = sys.argv[1]
t = collections.defaultdict(list)
for f in glob.glob(w + "/bench_*_r*.txt"):
    m = re.match(r".*/bench_(fp8_\w+?)_(on|off)_r(\d)\.txt", f)
    prec, mode = m.group(1), m.group(2)
    for line in open(f):
        p = line.split()
        if len(p) > 4 and p[1].isdigit() and p[2].startswith("grouped"):
            t[(prec, p[0], int(p[1]), mode)].append(float(p[3]))
print("prec shape m off_us on_us on/off (median of two rounds)")
for prec, shape, mm in sorted({(k[0], k[1], k[2]) for k in t}):
    off = statistics.median(t[(prec, shape, mm, "off")]); on = statistics.median(t[(prec, shape, mm, "on")])
    print(f"{prec:11s} {shape:18s} {mm:5d} {off:8.1f} {on:8.1f} {on/off:6.3f}")
PY
tar czf "$OUT/call2.tgz" -C "$W" . && rm -rf "$W"

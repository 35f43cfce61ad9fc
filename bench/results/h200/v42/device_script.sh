#!/usr/bin/env bash
# Temporary (not committed): build, FP8 grouped tests, memcheck, block-scaled A/B (192 vs 128 columns).
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; mkdir -p "$OUT"
source scripts/device_build.sh
t0=$(date +%s)
{ configure_device_build build/device ON && cmake --build build/device -j 16 --target fusedmoe_cli fusedmoe_gpu_tests; } > "$OUT/build.log" 2>&1
rc=$?; echo "build rc=$rc $(( $(date +%s) - t0 )) s"
grep -c C7510 "$OUT/build.log" && { echo "C7510 found"; exit 1; }
[ $rc -eq 0 ] || { tail -40 "$OUT/build.log"; exit 1; }
T=build/device/tests/fusedmoe_gpu_tests; B=build/device/fusedmoe
MODE="${MODE:-full}"
if [ "$MODE" = full ] || [ "$MODE" = tests ]; then
  $T --gtest_filter='Fp8LayerAuto.*:Paths/Fp8Layer.*/grouped_gemm:Paths/Fp8Layer.PartialBlocksEdgesAndModes/*' > "$OUT/ctest.txt" 2>&1
  echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$OUT/ctest.txt" | head -20
  /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 1 $T --gtest_filter=Paths/Fp8Layer.PartialBlocksEdgesAndModes/grouped_gemm > "$OUT/memcheck.txt" 2>&1
  echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$OUT/memcheck.txt" | head -5
fi
if [ "$MODE" = full ] || [ "$MODE" = bench ]; then
  for round in 1 2; do
    for mode in base b128; do
      echo "#### round $round mode $mode fp8_block"
      if [ $mode = b128 ]; then export FUSEDMOE_EXP_BLOCK128=1; else unset FUSEDMOE_EXP_BLOCK128; fi
      $B bench --precision fp8_block --m ${BENCH_M:-256,512,1024,2048,4096}
    done
  done > "$OUT/bench.txt" 2>&1
  unset FUSEDMOE_EXP_BLOCK128
  echo "bench done $(( $(date +%s) - t0 )) s"
  python3 - "$OUT/bench.txt" <<'PY' | tee "$OUT/summary.txt"
import sys, re, statistics, collections
t = collections.defaultdict(list); order = []; mode = None
for line in open(sys.argv[1]):
    m = re.match(r"#### round (\d+) mode (\S+) (\S+)", line)
    if m: mode = m.group(2); continue
    f = line.split()
    if len(f) > 4 and f[1].isdigit() and f[0][0].isalpha():
        key = (f[0], int(f[1]), f[2])
        if key not in order: order.append(key)
        t[(key, mode)].append(float(f[3]))
print(f"{'shape':22s} {'m':>5s} {'path':16s} {'192':>9s} {'128':>9s} ratio  (192/128, median of rounds)")
for key in order:
    a = statistics.median(t[(key, 'base')]); b = statistics.median(t[(key, 'b128')])
    print(f"{key[0]:22s} {key[1]:5d} {key[2]:16s} {a:9.1f} {b:9.1f} {a/b:.3f}")
PY
fi

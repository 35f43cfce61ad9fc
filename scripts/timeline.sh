#!/usr/bin/env bash
# On the GPU machine: where one layer call's time goes inside the bench's CUDA graph. Nsight
# Systems traces the graph's kernel nodes at full clocks (ncu, in profile.sh, runs each kernel
# alone with cold caches); this prints, for the median layer replay of each point, every
# kernel's start, duration and the gap before it (launch latency and dependency waits).
# Writes $OUT/timeline.txt.
#   device run: PRECISION=fp8_block bash scripts/timeline.sh deepseek_v3_tp8:1 llama4_scout_tp8:1
#   PATH_ARG=small_m|grouped_gemm|grouped_swapped|auto (default auto), PRECISION (default bf16)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/device_build.sh"
cd "$root"
out="${OUT:-$root/out}"
mkdir -p "$out"
build=build/device
command -v nsys > /dev/null || { echo "timeline.sh: no nsys on this machine" | tee "$out/timeline.txt"; exit 1; }
configure_device_build "$build" OFF > "$out/build.log" 2>&1 &&
  cmake --build "$build" -j "$(nproc)" --target fusedmoe_cli >> "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
: > "$out/timeline.txt"
tmp=$(mktemp -d)
for point in "$@"; do
  shape=${point%%:*}
  m=${point##*:}
  echo "== $shape m=$m path=${PATH_ARG:-auto} precision=${PRECISION:-bf16}" >> "$out/timeline.txt"
  nsys profile --cuda-graph-trace=node -t cuda -o "$tmp/tl" --force-overwrite true \
    "$build/fusedmoe" bench --shape "$shape" --m "$m" --path "${PATH_ARG:-auto}" --precision "${PRECISION:-bf16}" \
    --seconds 0.02 > "$tmp/nsys.log" 2>&1 || { tail -5 "$tmp/nsys.log" >> "$out/timeline.txt"; continue; }
  nsys stats -r cuda_gpu_trace -f csv -o "$tmp/tl" "$tmp/tl.nsys-rep" > /dev/null 2>&1
  python3 - "$tmp/tl_cuda_gpu_trace.csv" >> "$out/timeline.txt" <<'PY'
import csv, sys, statistics
rows = list(csv.DictReader(open(sys.argv[1])))
layer = ("align", "gather", "gated", "combine", "device_kernel", "setup", "gemv", "dequant", "fp8", "routing")
ks = [(int(r["Start (ns)"]), int(r["Duration (ns)"]), r["Name"]) for r in rows
      if any(s in r["Name"] for s in layer) and "cublas" not in r["Name"].lower() and "Kernel2" not in r["Name"]]
ks.sort()
# Layer calls: each starts with the align kernel; keep calls with the most common kernel count.
calls, cur = [], []
for k in ks:
    if "align" in k[2] and cur:
        calls.append(cur)
        cur = []
    cur.append(k)
if cur:
    calls.append(cur)
n = statistics.mode(len(c) for c in calls)
calls = [c for c in calls if len(c) == n]
span = lambda c: c[-1][0] + c[-1][1] - c[0][0]
calls.sort(key=span)
c = calls[len(calls) // 2]
t0, prev_end = c[0][0], c[0][0]
busy = 0
print(f"  median of {len(calls)} layer calls: {span(c) / 1e3:.1f} us first start to last end")
print(f"  {'kernel':64s} {'start':>8s} {'gap':>7s} {'dur':>7s}  (us)")
for s, d, name in c:
    print(f"  {name.split('(')[0][:64]:64s} {(s - t0) / 1e3:8.1f} {(s - prev_end) / 1e3:7.1f} {d / 1e3:7.1f}")
    prev_end = max(prev_end, s + d)
    busy += d
print(f"  {'sum of durations':64s} {'':8s} {'':7s} {busy / 1e3:7.1f}")
PY
done
rm -rf "$tmp"
cat "$out/timeline.txt"

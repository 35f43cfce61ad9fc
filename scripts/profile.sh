#!/usr/bin/env bash
# On the GPU machine: build (all cores) and profile one layer call per point with Nsight
# Compute: per-kernel time and DRAM traffic, weights not in L2 (ncu flushes caches between
# kernels). Writes $OUT/profile.txt and prints a table last.
#   device run: bash scripts/profile.sh mixtral_8x7b_tp1:64 qwen3_30b_a3b_tp1:4096   (carry: .deps)
#   PATH_ARG=auto|small_m|grouped_gemm|grouped_swapped|grouped_mixed (default auto), PRECISION=bf16|w4a16|... (default bf16),
#   BENCH_EXTRA: more bench options (e.g. "--dense-in-place 1")
#   DETAIL=REGEX: also the speed-of-light, occupancy, warp-state and memory sections of the
#   first two kernels whose names match REGEX (e.g. DETAIL=gemv), with the warp stall breakdown
#   FUSEDMOE_BIN=PATH: profile this fusedmoe binary (a release build carried to the device)
#   instead of building one there
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/device_build.sh"
cd "$root"
out="${OUT:-$root/out}"
mkdir -p "$out"
if [ -n "${FUSEDMOE_BIN:-}" ]; then
  bin="$FUSEDMOE_BIN"
else
  build=build/device
  configure_device_build "$build" OFF > "$out/build.log" 2>&1 &&
    cmake --build "$build" -j "$(nproc)" --target fusedmoe_cli >> "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
  bin="$build/fusedmoe"
fi
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
: > "$out/profile.txt"
for point in "$@"; do
  shape=${point%%:*}
  m=${point##*:}
  echo "== $shape m=$m path=${PATH_ARG:-auto} precision=${PRECISION:-bf16} ${BENCH_EXTRA:-}" >> "$out/profile.txt"
  # The first layer call (the bench's first graph replay): its kernels, at most 16.
  ncu --clock-control none --metrics "$metrics" --csv --print-units base -c 16 \
    -k regex:'align|gather|gated|combine|pdl_gemm|setup|gemv|dequant|fp8|wna16_grouped' \
    "$bin" bench --shape "$shape" --m "$m" --path "${PATH_ARG:-auto}" --precision "${PRECISION:-bf16}" ${BENCH_EXTRA:-} \
    --seconds 0.001 > "$out/ncu_raw.csv" 2>>"$out/profile.txt"
  python3 - "$out/ncu_raw.csv" >> "$out/profile.txt" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
hdr = rows[0]; rows = rows[1:]
ix = {k: hdr.index(k) for k in ("ID", "Kernel Name", "Metric Name", "Metric Value")}
by_id = collections.OrderedDict()
for r in rows:
    k = by_id.setdefault(r[ix["ID"]], {"name": r[ix["Kernel Name"]]})
    k[r[ix["Metric Name"]]] = float(r[ix["Metric Value"]].replace(",", ""))
ks = list(by_id.values())
# one layer call: from the first align launch to the next launch of that kernel
first = min(i for i, k in enumerate(ks) if "align" in k["name"])
nxt = [i for i, k in enumerate(ks) if k["name"] == ks[first]["name"] and i > first]
total = 0.0
for k in ks[first:nxt[0] if nxt else len(ks)]:
    us = k["gpu__time_duration.sum"] / 1e3
    rd, wr = k["dram__bytes_read.sum"] / 1e6, k["dram__bytes_write.sum"] / 1e6
    total += us
    name = k["name"].split("(")[0][:60]
    print(f"  {name:60s} {us:9.1f} us  read {rd:8.1f} MB  write {wr:8.1f} MB  {(rd + wr) / us if us else 0:5.2f} TB/s")
print(f"  {'sum of kernels':60s} {total:9.1f} us")
PY
  if [ -n "${DETAIL:-}" ]; then
    # The sections, plus the stall breakdown (cycles per issued instruction by reason) that
    # the WarpStateStats section only charts.
    ncu --clock-control none --section SpeedOfLight --section Occupancy --section WarpStateStats \
      --section MemoryWorkloadAnalysis --section LaunchStats \
      --metrics 'l1tex__throughput.avg.pct_of_peak_sustained_active,lts__t_bytes.sum,smsp__inst_executed.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
      --csv --print-units base -c 2 -k regex:"$DETAIL" \
      "$bin" bench --shape "$shape" --m "$m" --path "${PATH_ARG:-auto}" --precision "${PRECISION:-bf16}" ${BENCH_EXTRA:-} \
      --seconds 0.001 > "$out/ncu_detail.csv" 2>>"$out/profile.txt"
    python3 - "$out/ncu_detail.csv" >> "$out/profile.txt" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
hdr = rows[0]
ix = {k: hdr.index(k) for k in ("ID", "Kernel Name", "Section Name", "Metric Name", "Metric Value")}
last = None
for r in rows[1:]:
    if r[ix["ID"]] != last:
        last = r[ix["ID"]]
        print(f"  -- kernel {last}: {r[ix['Kernel Name']][:110]}")
    print(f"     {r[ix['Section Name']][:22]:22s} {r[ix['Metric Name']][:60]:60s} {r[ix['Metric Value']]}")
PY
  fi
done
cat "$out/profile.txt"

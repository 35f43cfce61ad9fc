#!/usr/bin/env bash
# v45 call 1: the epilogue-scaled FP8 GEMMs' producer prefetching each tile's scale vectors
# (candidate: working tree, CI-style release build, build/carry/cand) against e749132's CI
# release build (build/carry/base), interleaved, two rounds; FP8 GPU tests and a memcheck on
# the candidate; ncu of DeepSeek-V3 TP8 M = 4096's GEMM2 under both; the per-kernel times of
# fp8_tensor against fp8_channel at two mid-M points (base).
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; mkdir -p "$OUT"; W="$OUT/w"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
build/carry/cand/fusedmoe info > "$W/info.txt" 2>&1; head -2 "$W/info.txt"
timeout 300 build/carry/cand/fusedmoe_gpu_tests --gtest_filter='Fp8LayerAuto.*:Fp8Quantize.*:Paths/Fp8Layer.*' > "$W/ctest_cand.txt" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$W/ctest_cand.txt" | head -12
i=0
for args in "--precision fp8_channel --E 64 --H 640 --I 256 --topk 8 --m 700" "--precision fp8_tensor --E 16 --H 4096 --I 256 --topk 8 --m 60"; do
  i=$((i+1))
  /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 1 build/carry/cand/fusedmoe check $args > "$W/memcheck_$i.txt" 2>&1
  echo "memcheck $i ($args) rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ERROR SUMMARY|result" "$W/memcheck_$i.txt" | head -2
done
for round in 1 2; do
  for prec in fp8_channel fp8_tensor; do
    for v in base cand; do
      build/carry/$v/fusedmoe bench --precision $prec --m 64,256,1024,2048,4096 > "$W/bench_${prec}_${v}_r$round.txt" 2>&1
      echo "r$round $prec $v rc=$? $(( $(date +%s) - t0 )) s"
    done
  done
done
for v in base cand; do
  for prec in fp8_channel fp8_tensor; do
    ncu --clock-control none --metrics gpu__time_duration.sum -k regex:device_kernel --launch-skip 1 -c 1 \
      build/carry/$v/fusedmoe bench --shape deepseek_v3_tp8 --m 4096 --precision $prec --seconds 0.001 > "$W/ncu_gemm2_${prec}_$v.txt" 2>&1
    echo "ncu gemm2 $prec $v: $(grep -E 'gpu__time_duration' "$W/ncu_gemm2_${prec}_$v.txt" | tail -1)"
  done
done
for point in llama4_scout_tp8:256 qwen3_30b_a3b_tp1:1024 qwen2_57b_a14b_tp4:1024; do
  for prec in fp8_channel fp8_tensor; do
    shape=${point%%:*}; m=${point##*:}
    ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --csv --print-units base -c 20 -k regex:'align|gather|gated|combine|device_kernel|setup|gemv|dequant|fp8|route|topk' \
      build/carry/base/fusedmoe bench --shape $shape --m $m --precision $prec --seconds 0.001 > "$W/ncu_kernels_${shape}_${m}_$prec.csv" 2>/dev/null
  done
done
python3 - "$W" <<'PY' | tee "$W/summary.txt"
import sys, glob, re, statistics, collections, csv
w = sys.argv[1]
t = collections.defaultdict(list)
for f in glob.glob(w + "/bench_*_r*.txt"):
    m = re.match(r".*/bench_(fp8_[a-z]+)_(base|cand)_r(\d)\.txt", f)
    prec, v = m.group(1), m.group(2)
    for line in open(f):
        p = line.split()
        if len(p) > 4 and p[1].isdigit():
            t[(prec, p[0], int(p[1]), v)].append(float(p[3]))
print("prec shape m base_us cand_us cand/base (median of two rounds)")
for prec, shape, mm in sorted({(k[0], k[1], k[2]) for k in t}):
    b = statistics.median(t[(prec, shape, mm, "base")]); c = statistics.median(t[(prec, shape, mm, "cand")])
    print(f"{prec:11s} {shape:18s} {mm:5d} {b:8.1f} {c:8.1f} {c/b:6.3f}")
for f in sorted(glob.glob(w + "/ncu_kernels_*.csv")):
    print("==", f.split("/")[-1])
    rows = [r for r in csv.reader(open(f)) if len(r) > 10]
    if not rows: print("  (no rows)"); continue
    hdr = rows[0]; rows = rows[1:]
    ix = {k: hdr.index(k) for k in ("ID", "Kernel Name", "Metric Name", "Metric Value")}
    by_id = collections.OrderedDict()
    for r in rows:
        k = by_id.setdefault(r[ix["ID"]], {"name": r[ix["Kernel Name"]]})
        k[r[ix["Metric Name"]]] = float(r[ix["Metric Value"]].replace(",", ""))
    ks = list(by_id.values())
    first = min((i for i, k in enumerate(ks) if "align" in k["name"]), default=0)
    nxt = [i for i, k in enumerate(ks) if k["name"] == ks[first]["name"] and i > first]
    total = 0.0
    for k in ks[first:nxt[0] if nxt else len(ks)]:
        us = k["gpu__time_duration.sum"] / 1e3; total += us
        rd, wr = k["dram__bytes_read.sum"] / 1e6, k["dram__bytes_write.sum"] / 1e6
        print(f"  {k['name'].split('(')[0][:58]:58s} {us:8.1f} us  r {rd:7.1f} MB  w {wr:7.1f} MB")
    print(f"  {'sum':58s} {total:8.1f} us")
PY
tar czf "$OUT/call1.tgz" -C "$W" . && rm -rf "$W"

#!/usr/bin/env bash
# v46 call 2: cand (call 1's, with tools/cublas_peer.cpp recompiled against the new chunk size)
# checks the DeepSeek M = 2048 peer difference; exp (cand plus an environment switch,
# FUSEDMOE_ALIGN_ONE_CTA_MAX, and align scratch above any pair count: not landed) times the
# one-CTA kernel against the cooperative one at 2048-4096 pairs; per-kernel ncu times (cold
# L2) of the bf16 layer where it trails vLLM.
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w2"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
t0=$(date +%s)
build/carry/cand/fusedmoe bench --precision bf16 --shape deepseek_v3_tp8 --m 2048 > "$W/peer_check.txt" 2>&1
echo "peer check rc=$?"; tail -2 "$W/peer_check.txt"
for lim in 4096 2048 1024 1024 2048 4096; do
  n=1; [ -f "$W/bench_bf16_one${lim}_r1.txt" ] && n=2
  FUSEDMOE_ALIGN_ONE_CTA_MAX=$lim build/carry/exp/fusedmoe bench --precision bf16 --m 256,384,512 > "$W/bench_bf16_one${lim}_r$n.txt" 2>&1
  echo "one-CTA max $lim r$n rc=$? $(( $(date +%s) - t0 )) s"
done
for lim in 4096 1024; do
  FUSEDMOE_ALIGN_ONE_CTA_MAX=$lim ncu --metrics gpu__time_duration.sum -k regex:align -c 4 build/carry/exp/fusedmoe bench --shape qwen3_30b_a3b_tp1 --m 256 --precision bf16 --seconds 0.001 > "$W/ncu_align_one${lim}.txt" 2>&1
  echo "ncu align one-CTA max $lim qwen3 256: $(awk '/align_/{k=$1} /gpu__time/{print k, $NF}' "$W/ncu_align_one${lim}.txt" | tr '\n' ';')"
done
for point in qwen2_57b_a14b_tp4:1024 llama4_scout_tp8:256 llama4_scout_tp8:1024 qwen3_30b_a3b_tp1:256; do
  shape=${point%%:*}; m=${point##*:}
  ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --csv --print-units base -c 20 -k regex:'align|gather|gated|combine|device_kernel|setup|gemv|dequant|fp8|route|topk' \
    build/carry/cand/fusedmoe bench --shape $shape --m $m --precision bf16 --seconds 0.001 > "$W/ncu_kernels_${shape}_${m}_bf16.csv" 2>/dev/null
  echo "ncu $point $(( $(date +%s) - t0 )) s"
done
python3 - "$W" <<'PY' | tee "$W/summary.txt"
import sys, glob, re, statistics, collections, csv
w = sys.argv[1]
t = collections.defaultdict(list)
for f in glob.glob(w + "/bench_*_r*.txt"):
    m = re.match(r".*/bench_bf16_(one\d+)_r(\d)\.txt", f)
    v = m.group(1)
    for line in open(f):
        p = line.split()
        if len(p) > 4 and p[1].isdigit() and p[2].startswith(("grouped", "small")):
            t[(p[0], int(p[1]), v)].append(float(p[3]))
print("shape m one4096_us one2048/one4096 one1024/one4096 (bf16, median of two rounds)")
for shape, mm in sorted({(k[0], k[1]) for k in t}):
    b = statistics.median(t[(shape, mm, "one4096")])
    r = [statistics.median(t[(shape, mm, v)]) / b for v in ("one2048", "one1024")]
    print(f"{shape:18s} {mm:5d} {b:8.1f} {r[0]:6.3f} {r[1]:6.3f}")
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
tar czf "$OUT/call2.tgz" -C "$W" . && rm -rf "$W"

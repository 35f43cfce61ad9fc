#!/usr/bin/env bash
# v45 call 4: where dd5faaa's wrapper cost with its prefetch off: ncu per-kernel times (cold
# L2) of e749132's build (base) against dd5faaa's (final) at two points that lost 1.5% in
# call 3 (Qwen3 M = 2048 fp8_channel, Scout M = 2048 fp8_tensor), two runs each, alternating.
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w4"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
for run in 1 2; do
  for point in qwen3_30b_a3b_tp1:2048:fp8_channel llama4_scout_tp8:2048:fp8_tensor; do
    IFS=: read shape m prec <<< "$point"
    for v in base final; do
      ncu --clock-control none --metrics gpu__time_duration.sum --csv --print-units base -c 20 \
        -k regex:'align|gather|gated|combine|device_kernel|setup|fp8|route|topk' \
        build/carry/$v/fusedmoe bench --shape $shape --m $m --precision $prec --seconds 0.001 > "$W/ncu_${shape}_${m}_${prec}_${v}_r$run.csv" 2>/dev/null
    done
  done
done
python3 - "$W" <<'PY' | tee "$W/summary.txt"
import sys, glob, csv, collections, re
w = sys.argv[1]
def kernels(f):
    rows = [r for r in csv.reader(open(f)) if len(r) > 10]
    hdr = rows[0]; ix = {k: hdr.index(k) for k in ("ID", "Kernel Name", "Metric Value")}
    ks = [(r[ix["Kernel Name"]].split("(")[0][:40], float(r[ix["Metric Value"]].replace(",", "")) / 1e3) for r in rows[1:]]
    first = min(i for i, k in enumerate(ks) if "align" in k[0])
    nxt = [i for i, k in enumerate(ks) if k[0] == ks[first][0] and i > first]
    return ks[first:nxt[0] if nxt else len(ks)]
for point in sorted({re.sub(r"_(base|final)_r\d\.csv$", "", f) for f in glob.glob(w + "/ncu_*.csv")}):
    print("==", point.split("/")[-1])
    runs = {v: [kernels(f) for f in sorted(glob.glob(f"{point}_{v}_r*.csv"))] for v in ("base", "final")}
    for i, (name, _) in enumerate(runs["base"][0]):
        b = [r[i][1] for r in runs["base"]]; c = [r[i][1] for r in runs["final"]]
        print(f"  {name:40s} base {' '.join(f'{x:7.1f}' for x in b)}  final {' '.join(f'{x:7.1f}' for x in c)}")
PY
tar czf "$OUT/call4.tgz" -C "$W" . && rm -rf "$W"

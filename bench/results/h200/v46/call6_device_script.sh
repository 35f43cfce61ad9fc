#!/usr/bin/env bash
# v46 call 6: where call 5's programmatic dependent GEMMs lose at large M: per-kernel ncu
# times (each kernel alone, cold L2, so without any overlap) of g and p at Scout M = 4096 and
# Mixtral M = 1024 (bf16), two runs each, alternating; then the layer under the bench again.
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w6"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone; ln -sfn "$root" /tmp/rel
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
t0=$(date +%s)
for run in 1 2; do
  for v in g p; do
    for pt in "llama4_scout_tp8 4096" "mixtral_8x7b_tp1 1024"; do
      set -- $pt
      ncu --clock-control none --metrics gpu__time_duration.sum --csv --print-units base -c 20 \
        -k regex:'align|gather|gated|combine|device_kernel|pdl_gemm|setup' \
        build/carry/$v/fusedmoe bench --shape $1 --m $2 --precision bf16 --seconds 0.001 > "$W/ncu_${1}_${2}_${v}_r$run.csv" 2>/dev/null
      echo "ncu $v $pt r$run $(( $(date +%s) - t0 )) s"
    done
  done
done
for v in g p p g; do
  n=1; [ -f "$W/bench_bf16_${v}_r1.txt" ] && n=2
  build/carry/$v/fusedmoe bench --precision bf16 --shape llama4_scout_tp8 --m 4096 > "$W/bench_bf16_${v}_r$n.txt" 2>&1
done
python3 - "$W" <<'PY' | tee "$W/summary.txt"
import sys, glob, csv, collections
w = sys.argv[1]
for f in sorted(glob.glob(w + "/ncu_*.csv")):
    rows = [r for r in csv.reader(open(f)) if len(r) > 10]
    if not rows: print(f.split("/")[-1], "(no rows)"); continue
    hdr = rows[0]; ix = {k: hdr.index(k) for k in ("ID", "Kernel Name", "Metric Value")}
    ks = [(r[ix["Kernel Name"]].split("(")[0][-40:], float(r[ix["Metric Value"]].replace(",", "")) / 1e3) for r in rows[1:]]
    first = min((i for i, k in enumerate(ks) if "align" in k[0]), default=0)
    nxt = [i for i, k in enumerate(ks) if k[0] == ks[first][0] and i > first]
    sel = ks[first:nxt[0] if nxt else len(ks)]
    print(f.split("/")[-1], " ".join(f"{n.split('::')[-1][:24]}={t:.1f}" for n, t in sel), f"sum={sum(t for _, t in sel):.1f}")
for f in sorted(glob.glob(w + "/bench_*.txt")):
    print(f.split("/")[-1], [l.split()[3] for l in open(f) if l.startswith("llama4_scout_tp8")])
PY
tar czf "$OUT/call6.tgz" -C "$W" . && rm -rf "$W"

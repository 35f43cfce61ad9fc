#!/usr/bin/env bash
# v63 call 5: the down GEMV's time against its CTA count at fixed bytes (dag2, w4a16 GPTQ
# g128): ncu times of both GEMVs with down forced to split 1, 2, 4 (gate-up at split 1) at
# Qwen3 M = 4 / 8, DeepSeek-V3 TP8 M = 4 and Qwen2 TP4 M = 16 (K = 768, 256, 640).
#   carry: ["build/carry/dag2.tgz"]
source scripts/carried_env.sh
carried_setup "${W:-w5}" dag2 || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
m='gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,sm__warps_active.avg.pct_of_peak_sustained_active'
for pt in qwen3_30b_a3b_tp1:4 qwen3_30b_a3b_tp1:8 deepseek_v3_tp8:4 qwen2_57b_a14b_tp4:16; do
  s=${pt%%:*} mm=${pt##*:}
  for d in 1 2 4; do
    timeout 60 ncu --clock-control none --print-units base --metrics "$m" -k regex:wna16_gemv -c 2 --csv "$BIN_dag2" \
      bench --shape "$s" --m "$mm" --precision w4a16 --split-k 1,$d --seconds 0.001 > "$W/ncu_${s}_${mm}_d$d.csv" 2> /dev/null
    timeout 60 "$BIN_dag2" bench --shape "$s" --m "$mm" --precision w4a16 --split-k 1,$d > "$W/bench_${s}_${mm}_d$d.txt" 2>&1
  done
done
echo "done $(el) s" >> "$W/info.txt"
cat "$W/info.txt"
python3 - "$W" <<'PY'
import csv, glob, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "ncu_*.csv"))):
    rows = [r for r in csv.reader(open(f)) if len(r) > 10]
    if not rows: print(os.path.basename(f), "no rows"); continue
    h = rows[0]; ix = {k: h.index(k) for k in ("ID", "Kernel Name", "Metric Name", "Metric Value")}
    ks = {}
    for r in rows[1:]:
        d = ks.setdefault(r[ix["ID"]], {"name": r[ix["Kernel Name"]]})
        try: d[r[ix["Metric Name"]]] = float(r[ix["Metric Value"]].replace(",", ""))
        except ValueError: pass
    b = f.replace("ncu_", "bench_").replace(".csv", ".txt")
    lay = [l.split()[3] for l in open(b) if l.split()[:1] and l.split()[0].startswith(("qwen", "deepseek"))] if os.path.exists(b) else ["?"]
    out = []
    for kid, d in ks.items():
        out.append(f"{d.get('gpu__time_duration.sum', 0) * 1e-3:6.1f} us dram {d.get('dram__throughput.avg.pct_of_peak_sustained_elapsed', 0):4.1f}% grid {d.get('launch__grid_size', 0):5.0f}")
    print(os.path.basename(f)[4:-4].ljust(28), " | ".join(out), "| layer", lay[0] if lay else "?")
PY
carried_pack

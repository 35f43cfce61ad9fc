#!/usr/bin/env bash
# v62 call 1, main's build (fin.tgz of v61 = 1bc0862's kernels): why wna16_gemv streams int4 at
# 45-57% of the read roofline from M = 8 to 64 (v61 bench) where bf16's GEMV reaches 85-90%.
# ncu of the first layer call's two GEMVs (gate-up, down) at the decode points, caches flushed,
# clocks free: time, DRAM %, issue %, instructions, shared wavefronts and bank conflicts, L1 and
# L2 throughput, tensor pipe, occupancy, stall reasons per issue; then per-SASS samples of the
# four-tile (Mixtral M = 64) and one-tile (Qwen2 M = 16) kernels.
# Call 5 runs it as B=ex W=w5 POINTS="qwen2_57b_a14b_tp4:16 mixtral_8x7b_tp1:64" SASS=qw2_16.
#   carry: ["build/carry/fin.tgz"]
B="${B:-fin}"
POINTS="${POINTS:-mixtral_8x7b_tp1:16 mixtral_8x7b_tp1:64 qwen2_57b_a14b_tp4:16 qwen2_57b_a14b_tp4:64 qwen3_30b_a3b_tp1:32 deepseek_v3_tp8:16 deepseek_v3_tp8:64 llama4_scout_tp8:64}"
SASS="${SASS:-mix64 qw2_16}"
source scripts/carried_env.sh
carried_setup "${W:-w1}" "$B" || exit 1
bin="$root/build/carry/$B/fusedmoe"
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
M='gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__throughput.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__warps_active.avg.per_cycle_active,launch__registers_per_thread,launch__grid_size,launch__shared_mem_per_block_dynamic,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'
for pt in $POINTS; do
  s=${pt%%:*} m=${pt##*:}
  timeout 120 ncu --clock-control none --print-units base --metrics "$M" -k regex:wna16_gemv -c 2 --csv "$bin" \
    bench --shape "$s" --m "$m" --precision w4a16 --seconds 0.001 > "$W/ncu_${s}_$m.csv" 2> "$W/ncu_${s}_$m.err"
  echo "ncu $pt $(el) s" >> "$W/info.txt"
done
case " $SASS " in *" mix64 "*) ncu_sass "$bin" mix64 wna16_gemv bench --shape mixtral_8x7b_tp1 --m 64 --precision w4a16 --seconds 0.001 ;; esac
case " $SASS " in *" qw2_16 "*) ncu_sass "$bin" qw2_16 wna16_gemv bench --shape qwen2_57b_a14b_tp4 --m 16 --precision w4a16 --seconds 0.001 ;; esac
cat "$W/info.txt"
python3 - "$W" <<'PY'
import csv, glob, os, sys
keys = [("gpu__time_duration.sum", "us", 1e-3), ("dram__throughput.avg.pct_of_peak_sustained_elapsed", "dram%", 1),
        ("smsp__issue_active.avg.pct_of_peak_sustained_active", "issue%", 1), ("smsp__inst_executed.sum", "Minst", 1e-6),
        ("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", "Mshwf", 1e-6), ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", "Mconf", 1e-6),
        ("l1tex__throughput.avg.pct_of_peak_sustained_active", "l1%", 1), ("lts__throughput.avg.pct_of_peak_sustained_elapsed", "l2%", 1),
        ("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", "tc%", 1), ("smsp__warps_active.avg.per_cycle_active", "warps", 1),
        ("launch__registers_per_thread", "regs", 1), ("launch__grid_size", "grid", 1)]
for f in sorted(glob.glob(os.path.join(sys.argv[1], "ncu_*.csv"))):
    rows = [r for r in csv.reader(open(f)) if len(r) > 10]
    if not rows: print(os.path.basename(f), "no rows"); continue
    h = rows[0]; ix = {k: h.index(k) for k in ("ID", "Kernel Name", "Metric Name", "Metric Value")}
    ks = {}
    for r in rows[1:]:
        d = ks.setdefault(r[ix["ID"]], {"name": r[ix["Kernel Name"]]})
        try: d[r[ix["Metric Name"]]] = float(r[ix["Metric Value"]].replace(",", ""))
        except ValueError: pass
    for kid, d in ks.items():
        nm = d["name"]; t = nm[nm.find("<"):nm.find(">") + 1] if "<" in nm else nm[:40]
        print(os.path.basename(f)[4:-4], t[:70])
        print("   " + " ".join(f"{lab}={d.get(k, float('nan')) * sc:.1f}" for k, lab, sc in keys))
        st = sorted(((v, k) for k, v in d.items() if k.startswith("smsp__average_warps_issue_stalled")), reverse=True)[:6]
        print("   stalls: " + " ".join(f"{k.split('stalled_')[1].split('_per')[0]}={v:.2f}" for v, k in st))
PY
carried_pack

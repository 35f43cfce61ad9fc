#!/usr/bin/env python3
"""Summarize `ncu --csv --metrics ...` logs of the layer's kernels, one table per file.

  scripts/ncu_summary.py DIR            # every DIR/ncu_*.csv
  scripts/ncu_summary.py DIR --detail   # per launch: issue, instructions, shared memory, L1/L2,
                                        # occupancy and the six largest stall reasons per issue
                                        # (the metrics of scripts/carried_env.sh's ncu_points)

Per kernel (name and grid) of each file: the launches seen, and the medians of the kernel's
time (us), DRAM throughput, and the tensor pipes' (wgmma, mma.sync) active cycles, in percent
of peak. ncu's "n/a" reads as nan.
"""
import csv
import glob
import os
import re
import sys

DETAIL = [("gpu__time_duration.sum", "us", 1e-3), ("dram__throughput.avg.pct_of_peak_sustained_elapsed", "dram%", 1),
          ("smsp__issue_active.avg.pct_of_peak_sustained_active", "issue%", 1), ("smsp__inst_executed.sum", "Minst", 1e-6),
          ("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", "Mshwf", 1e-6),
          ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", "Mconf", 1e-6),
          ("l1tex__throughput.avg.pct_of_peak_sustained_active", "l1%", 1),
          ("lts__throughput.avg.pct_of_peak_sustained_elapsed", "l2%", 1),
          ("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", "tc%", 1),
          ("smsp__warps_active.avg.per_cycle_active", "warps", 1), ("launch__registers_per_thread", "regs", 1),
          ("launch__grid_size", "grid", 1)]


def value(v):
    try:
        return float(v.replace(",", "").replace("n/a", "nan"))
    except ValueError:
        return float("nan")


def kernels_of(f):
    rows = [r for r in csv.reader(line for line in open(f) if line.startswith('"'))]
    if not rows:
        return None
    h = rows[0]
    ix = {k: h.index(k) for k in ("ID", "Kernel Name", "Grid Size", "Metric Name", "Metric Value")}
    kernels = {}
    for r in rows[1:]:
        i = int(r[ix["ID"]])
        kernels.setdefault(i, {"name": r[ix["Kernel Name"]], "grid": r[ix["Grid Size"]]})[r[ix["Metric Name"]]] = r[ix["Metric Value"]]
    return kernels


def short_name(d):
    name = d["name"].replace("(anonymous namespace)::", "").replace("void ", "")
    return re.split(r"[<(]", name)[0].split("::")[-1][:26] + " " + d["grid"]


def detail(f, kernels):
    print("==", os.path.basename(f)[4:-4])
    for i in sorted(kernels):
        d = kernels[i]
        print(f"  {short_name(d)}")
        print("    " + " ".join(f"{lab}={value(d.get(k, 'nan')) * sc:.1f}" for k, lab, sc in DETAIL))
        st = sorted(((value(v), k) for k, v in d.items() if k.startswith("smsp__average_warps_issue_stalled")), reverse=True)[:6]
        print("    stalls: " + " ".join(f"{k.split('stalled_')[1].split('_per')[0]}={v:.2f}" for v, k in st))


def summary(f, kernels):
    agg = {}
    for i in sorted(kernels):
        agg.setdefault(short_name(kernels[i]), []).append(kernels[i])
    print("==", os.path.basename(f)[4:-4])
    for n, ds in agg.items():
        def med(key):
            v = sorted(value(d.get(key, "nan")) for d in ds)
            return v[len(v) // 2]
        print(f"  {n:40s} x{len(ds):2d} {med('gpu__time_duration.sum') / 1e3:9.1f} us"
              f"  dram {med('dram__throughput.avg.pct_of_peak_sustained_elapsed'):5.1f}%"
              f"  gmma {med('sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed'):5.1f}%"
              f"  hmma {med('sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed'):5.1f}%")


def main(directory, detailed):
    for f in sorted(glob.glob(os.path.join(directory, "ncu_*.csv"))):
        kernels = kernels_of(f)
        if not kernels:
            print(os.path.basename(f), "no rows")
            continue
        (detail if detailed else summary)(f, kernels)


if __name__ == "__main__":
    main(sys.argv[1], "--detail" in sys.argv[2:])

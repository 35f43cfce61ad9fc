#!/usr/bin/env python3
"""Summarize `ncu --csv --metrics ...` logs of the layer's kernels, one table per file.

  scripts/ncu_summary.py DIR        # every DIR/ncu_*.csv

Per kernel (name and grid) of each file: the launches seen, and the medians of the kernel's
time (us), DRAM throughput, and the tensor pipes' (wgmma, mma.sync) active cycles, in percent
of peak. ncu's "n/a" reads as nan.
"""
import csv
import glob
import os
import re
import sys


def main(directory):
    for f in sorted(glob.glob(os.path.join(directory, "ncu_*.csv"))):
        rows = [r for r in csv.reader(line for line in open(f) if line.startswith('"'))]
        if not rows:
            print(os.path.basename(f), "no rows")
            continue
        h = rows[0]
        ix = {k: h.index(k) for k in ("ID", "Kernel Name", "Grid Size", "Metric Name", "Metric Value")}
        kernels = {}
        for r in rows[1:]:
            i = int(r[ix["ID"]])
            kernels.setdefault(i, {"name": r[ix["Kernel Name"]], "grid": r[ix["Grid Size"]]})[r[ix["Metric Name"]]] = r[ix["Metric Value"]]
        agg = {}
        for i in sorted(kernels):
            d = kernels[i]
            name = d["name"].replace("(anonymous namespace)::", "").replace("void ", "")
            n = re.split(r"[<(]", name)[0].split("::")[-1][:26] + " " + d["grid"]
            agg.setdefault(n, []).append(d)
        print("==", os.path.basename(f)[4:-4])
        for n, ds in agg.items():
            def med(key):
                v = sorted(float(d.get(key, "nan").replace(",", "").replace("n/a", "nan")) for d in ds)
                return v[len(v) // 2]
            print(f"  {n:40s} x{len(ds):2d} {med('gpu__time_duration.sum') / 1e3:9.1f} us"
                  f"  dram {med('dram__throughput.avg.pct_of_peak_sustained_elapsed'):5.1f}%"
                  f"  gmma {med('sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed'):5.1f}%"
                  f"  hmma {med('sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed'):5.1f}%")


if __name__ == "__main__":
    main(sys.argv[1])

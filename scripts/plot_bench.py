#!/usr/bin/env python3
"""Plots a `fusedmoe bench --csv` file: % of the roofline and speedup over vLLM vs batch size, per shape.

usage: scripts/plot_bench.py bench/results/h200/bench_bf16.csv [out.png]   (needs matplotlib)
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main() -> None:
    path = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else path.rsplit(".", 1)[0] + ".png"
    rows = defaultdict(list)
    meta = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            rows[r["shape"]].append(r)
            meta = r
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 4.8))
    for shape, rs in rows.items():
        rs.sort(key=lambda r: int(r["m"]))
        ax1.plot([int(r["m"]) for r in rs], [float(r["pct_roofline"]) for r in rs], marker="o", label=shape)
        peers = [r for r in rs if float(r.get("vllm_us", r.get("vllm_bf16_us", 0))) > 0]
        ax2.plot([int(r["m"]) for r in peers], [float(r["speedup_vs_vllm"]) for r in peers], marker="o", label=shape)
    ax1.set(xscale="log", xlabel="tokens M", ylabel="% of roofline (max of bandwidth and matmul floors)",
            title=f"fusedmoe {meta.get('precision', '')} layer on {meta.get('gpu', '')}")
    ax1.axhline(85, color="grey", linestyle="--", linewidth=0.8)
    ax2.set(xscale="log", xlabel="tokens M", ylabel="speedup over vLLM Triton (TARGETS.md)", title="vs vLLM fused_moe")
    ax2.axhline(1.0, color="grey", linestyle="--", linewidth=0.8)
    for ax in (ax1, ax2):
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(out)


if __name__ == "__main__":
    main()

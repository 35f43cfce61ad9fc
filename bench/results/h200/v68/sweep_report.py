#!/usr/bin/env python3
"""v68's forced split-K sweep: for each precision, each (shape, m), the planner's time (auto),
the fastest forced G,D and its ratio to auto, and the additive fit's best gate-up and down
splits (t(G, D) ~ a_G + b_D over the grid: which split of each GEMV is fastest when the other is
held). Reads DIR/sweep_P_auto.txt and DIR/sweep_P_G_D.txt (fusedmoe bench text).

  sweep_report.py DIR PRECISION...
"""
import os
import re
import sys

SPLITS = (1, 2, 4, 8)


def read(path):
    pts = {}
    if not os.path.exists(path):
        return pts
    for line in open(path):
        f = line.split()
        if len(f) >= 4 and f[1].isdigit() and re.match(r"^\d+(\.\d+)?$", f[3]):
            pts[(f[0], int(f[1]))] = float(f[3])
    return pts


def main():
    d = sys.argv[1]
    for pr in sys.argv[2:]:
        auto = read(os.path.join(d, f"sweep_{pr}_auto.txt"))
        grid = {(g, k): read(os.path.join(d, f"sweep_{pr}_{g}_{k}.txt")) for g in SPLITS for k in SPLITS}
        print(f"== sweep {pr}: shape m auto_us best_G,D best_us best/auto | fit: G row mean (us), D column mean")
        wins = []
        for key in sorted(auto, key=lambda x: (x[0], x[1])):
            t = {gd: pts[key] for gd, pts in grid.items() if key in pts}
            if not t:
                continue
            best = min(t, key=t.get)
            r = t[best] / auto[key]
            full = [gd for gd in grid if gd in t]
            rows = {g: sum(t[(g, k)] for k in SPLITS if (g, k) in t) / max(1, sum((g, k) in t for k in SPLITS)) for g in SPLITS}
            cols = {k: sum(t[(g, k)] for g in SPLITS if (g, k) in t) / max(1, sum((g, k) in t for g in SPLITS)) for k in SPLITS}
            bg, bd = min(rows, key=rows.get), min(cols, key=cols.get)
            print(f"{key[0][:18]:18s} {key[1]:3d} {auto[key]:8.1f} {best[0]},{best[1]} {t[best]:8.1f} {r:6.3f} | "
                  f"G {bg} D {bd} n={len(full)}")
            if r < 0.97:
                wins.append((key, best, r))
        print(f"points where a forced pair is >= 3% faster: {len(wins)}")


if __name__ == "__main__":
    main()

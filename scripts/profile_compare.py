#!/usr/bin/env python3
"""Side by side: the per-kernel times of several builds' scripts/profile.sh outputs (ncu, one
layer call per point, each kernel alone with a cold L2), so that a candidate's kernels are
timed alone before its layer is (PERF.md v70: a glue change that cut instructions lost because
its kernel was slower by itself; another changed what did not bound its kernel).

  profile_compare.py BASE.txt CAND.txt [CAND2.txt ...]

Per point (the "== shape m=..." sections) and kernel (by its place in the layer), each build's
microseconds and CAND / BASE; '*' where a build ran a kernel of another name there (another
instantiation), '-' where it ran fewer kernels.
"""
import os
import re
import sys

KERNEL = re.compile(r"^\s+(.*?)\s+(\d+(?:\.\d+)?) us\b")


def read(path):
    """{point: [(kernel name, us), ...]} in file order, with the point's 'sum of kernels'."""
    points, cur = {}, None
    with open(path) as f:
        for line in f:
            if line.startswith("== "):
                cur = line[3:].strip()
                points[cur] = []
                continue
            m = KERNEL.match(line)
            if cur is not None and m:
                points[cur].append((m.group(1).strip(), float(m.group(2))))
    return points


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    runs = [read(p) for p in argv]
    names = [p.rsplit("/", 1)[-1].removesuffix(".txt") for p in argv]
    common = os.path.commonprefix(names) if len(set(names)) == len(names) else ""
    names = [n[len(common):] or n for n in names]  # profile_glue_main.txt -> main
    print(f"{'kernel':48s} " + " ".join(f"{n[:12]:>12s}" for n in names) + "  " +
          " ".join(f"{'/' + n[:9]:>10s}" for n in names[1:]))
    for point, base in runs[0].items():
        print(f"== {point}")
        for i, (name, us) in enumerate(base):
            cells, ratios = [f"{us:12.1f}"], []
            for run in runs[1:]:
                other = run.get(point, [])
                if i >= len(other):
                    cells.append(f"{'-':>12s}")
                    ratios.append(f"{'-':>10s}")
                    continue
                oname, ous = other[i]
                mark = "*" if oname != name else " "
                cells.append(f"{ous:11.1f}{mark}")
                ratios.append(f"{ous / us:10.3f}" if us > 0 else f"{'-':>10s}")
            print(f"{name[:48]:48s} " + " ".join(cells) + "  " + " ".join(ratios))


if __name__ == "__main__":
    main(sys.argv[1:])

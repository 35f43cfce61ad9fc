#!/usr/bin/env python3
"""Here or on the GPU machine: compare two `fusedmoe bench` results point by point, and flag
the points that got slower. A same-run A/B (scripts/ab_bench.sh) compares two builds; this
compares a new run with the last committed one, which is what finds a regression that no A/B
of the day looks at (PERF.md v21: decode 10-20% slower for two sessions, seen only when a full
bench was set beside v17's).

  scripts/bench_compare.py OLD NEW [--slower 1.05] [--precision bf16]

OLD and NEW: a bench CSV (`fusedmoe bench --csv`), the text `fusedmoe bench` prints (one or
several precisions), or an ab_bench summary (its last revision's column). Points are matched by
(precision, shape, m); a changed path is shown. Prints one line per common point with the
ratio new / old, marks those above --slower, and exits 1 when any is, 2 on unreadable input.
Run-to-run spread on the H200 is about 1-2% (PERF.md v17-v21), so keep --slower above 1.03.
"""
import argparse
import csv
import re
import sys


def read_points(path, want_precision=None):
    """{(precision, shape, m): (us, path)} from a bench CSV, bench text or ab_bench summary."""
    points = {}
    with open(path, newline="") as f:
        text = f.read()
    first = text.lstrip().splitlines()[0] if text.strip() else ""
    if first.startswith("gpu,") or ",shape," in first:
        for row in csv.DictReader(line for line in text.splitlines() if not line.startswith("#")):
            points[(row["precision"], row["shape"], int(row["m"]))] = (float(row["us"]), row.get("path", ""))
    else:
        precision, mode = None, None
        for line in text.splitlines():
            header = re.match(r"fusedmoe bench: .*?; precision (\S+);", line)
            ab_set = re.match(r"set \d+: .*\[--precision (\S+)", line)
            if header or ab_set:
                precision, mode = (header or ab_set).group(1), "bench" if header else "ab"
                continue
            f = line.split()
            if precision is None or len(f) < 4 or not f[1].isdigit():
                continue
            if mode == "ab" and len(f) >= 6:
                # ab_bench summary row: shape m us0 path0 [us1 path1 ...] ratio; the last
                # revision's us is the second-to-last pair
                points[(precision, f[0], int(f[1]))] = (float(f[-3]), f[-2])
            elif mode == "bench" and re.match(r"^\d+(\.\d+)?$", f[3]):
                # bench table row: shape m path us ...
                points[(precision, f[0], int(f[1]))] = (float(f[3]), f[2])
    if want_precision:
        points = {k: v for k, v in points.items() if k[0] == want_precision}
    return points


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--slower", type=float, default=1.05, help="flag ratios new/old above this (default 1.05)")
    ap.add_argument("--precision", help="only this precision")
    args = ap.parse_args(argv)
    if not args.slower > 1.0:
        print(f"--slower: expected a ratio above 1, got {args.slower}", file=sys.stderr)
        return 2
    try:
        old = read_points(args.old, args.precision)
        new = read_points(args.new, args.precision)
    except (OSError, ValueError, KeyError) as e:
        print(f"bench_compare: cannot read the inputs: {e}", file=sys.stderr)
        return 2
    common = sorted(set(old) & set(new))
    if not common:
        print(f"bench_compare: no common (precision, shape, m) points ({len(old)} in {args.old}, "
              f"{len(new)} in {args.new})", file=sys.stderr)
        return 2
    flagged = 0
    for key in common:
        (us_old, path_old), (us_new, path_new) = old[key], new[key]
        ratio = us_new / us_old if us_old > 0 else float("inf")
        mark = ""
        if ratio > args.slower:
            mark = "  SLOWER"
            flagged += 1
        path = path_new if path_old == path_new else f"{path_old}->{path_new}"
        print(f"{key[0]:12s} {key[1]:24s} {key[2]:6d} {us_old:10.1f} {us_new:10.1f} {ratio:6.3f}  {path}{mark}")
    print(f"{len(common)} common points, {flagged} slower than {args.slower:.2f}x "
          f"(only in old: {len(set(old) - set(new))}, only in new: {len(set(new) - set(old))})")
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""The routing stage's rounds side by side: `fusedmoe bench --stage routing` outputs named
routing_BUILD_rROUND.txt in a folder (the device call scripts under bench/results/ write them),
printed as route_us / both_us per shape and M, one column per build and round, in round order.

usage: routing_rounds.py FOLDER
"""
import glob
import os
import sys


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    rows = {}
    for path in glob.glob(os.path.join(sys.argv[1], "routing_*_r*.txt")):
        tag = os.path.basename(path)[len("routing_"):-len(".txt")]
        with open(path) as f:
            for line in f:
                p = line.split()
                # shape m E pairs route_us align_us both_us target...
                if len(p) >= 7 and p[1].isdigit() and p[2].isdigit():
                    rows.setdefault((p[0], int(p[1])), {})[tag] = (p[4], p[6])
    tags = sorted({t for v in rows.values() for t in v}, key=lambda t: int(t.rsplit("_r", 1)[1]))
    print("route_us/both_us by build and round:", " ".join(tags))
    for shape, m in sorted(rows):
        cells = rows[(shape, m)]
        print("%-20s %5d  %s" % (shape[:20], m, "  ".join("%s/%s" % cells.get(t, ("-", "-")) for t in tags)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env bash
# v64 call 3, main's build (land = 7325020): the integer down GEMV's tiles per warp forced to
# 1, 2, 3, 4, 6 and 8 (where it can: one n-tile, split 1 or 2) against the planner's choice
# (auto, twice: first and last), w4a16 and w8a16 at M = 1-128: the data for a tiles-per-warp
# rule below 8 waves (call 2: four tiles gained 3-5% at Qwen3 M = 4-32 and lost up to 1.77x
# at Mixtral M = 2-16).
#   carry: ["build/carry/land.tgz"]
source scripts/carried_env.sh
carried_setup "${W:-w3}" land || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
for pr in w4a16 w8a16; do
  for t in auto 1 2 3 4 6 8 auto2; do
    a=$([ "${t#auto}" = "$t" ] && echo "--tiles-per-warp $t")
    timeout 60 "$BIN_land" bench --precision $pr --m 1,2,4,8,16,32,64,128 $a > "$W/bench_${pr}_t$t.txt" 2>&1
  done
  echo "tiles $pr $(el) s" >> "$W/info.txt"
done
carried_report
for pr in w4a16 w8a16; do
  echo "== $pr: us at auto, auto2, then T = 1 2 3 4 6 8 as ratios to auto"
  python3 - "$W" "$pr" <<'PY'
import sys
w, pr = sys.argv[1], sys.argv[2]
def read(t):
    d = {}
    for line in open(f"{w}/bench_{pr}_t{t}.txt"):
        f = line.split()
        if len(f) > 4 and f[0][:4] in ("mixt", "qwen", "deep", "llam"):
            d[(f[0], int(f[1]))] = float(f[3])
    return d
runs = {t: read(t) for t in ["auto", "auto2", "1", "2", "3", "4", "6", "8"]}
for k in sorted(runs["auto"]):
    a = runs["auto"][k]
    print(f"{k[0][:14]:14s} {k[1]:4d} {a:7.1f} {runs['auto2'].get(k, 0):7.1f} " +
          " ".join(f"{runs[t].get(k, 0) / a:.3f}" for t in ["1", "2", "3", "4", "6", "8"]))
PY
done
carried_pack

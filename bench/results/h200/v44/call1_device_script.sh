#!/usr/bin/env bash
# v44 call 1: FP8 epilogue-scaled tile A/B (temporary FUSEDMOE_FP8_TILE_AB switch in layer.cpp's fp8_tile, not committed).
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; mkdir -p "$OUT"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
B=build/carry/fusedmoe
t0=$(date +%s)
$B info > "$OUT/info.txt" 2>&1; head -5 "$OUT/info.txt"
for round in 1 2; do
  for prec in fp8_channel fp8_tensor; do
    for mode in default w2r128 w2c128 w13c128; do
      if [ $mode = default ]; then unset FUSEDMOE_FP8_TILE_AB; else export FUSEDMOE_FP8_TILE_AB=$mode; fi
      $B bench --precision $prec --m 128,256,512,1024,2048,4096 > "$OUT/bench_${prec}_${mode}_r$round.txt" 2>&1
      echo "r$round $prec $mode rc=$? $(( $(date +%s) - t0 )) s"
    done
  done
done
unset FUSEDMOE_FP8_TILE_AB
python3 - "$OUT" <<'PY'
import sys, glob, re, statistics, collections
out = sys.argv[1]
t = collections.defaultdict(list)
for f in glob.glob(out + "/bench_*_r*.txt"):
    m = re.match(r".*/bench_(fp8_\w+?)_(default|w2r128|w2c128|w13c128)_r(\d)\.txt", f)
    prec, mode = m.group(1), m.group(2)
    for line in open(f):
        p = line.split()
        if len(p) > 4 and p[1].isdigit() and p[2].startswith("grouped"):
            t[(prec, p[0], int(p[1]), mode)].append(float(p[3]))
keys = sorted({(k[0], k[1], k[2]) for k in t})
print("prec shape m default w2r128 w2c128 w13c128 (ratios to default, median of rounds)")
for prec, shape, mm in keys:
    d = statistics.median(t[(prec, shape, mm, "default")])
    r = [statistics.median(t[(prec, shape, mm, md)]) / d for md in ("w2r128", "w2c128", "w13c128")]
    print(f"{prec:11s} {shape:18s} {mm:5d} {d:8.1f} " + " ".join(f"{x:6.3f}" for x in r))
PY

#!/usr/bin/env bash
# v48 call 8: `tiles` = 6897d07 + FUSEDMOE_WNA16_FOUR_TILES_ABOVE (the pairs per active expert
# above which wna16_gemv takes four n-tiles; 12 = 6897d07's rule): 12 / 6 / 3 / 3 / 6 / 12 for
# w4a16, 12 / 6 / 3 for w8a16, at M = 8-512.
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w8"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
B=build/carry/tiles/fusedmoe; t0=$(date +%s)
M=8,16,32,64,128,256,512
for v in 12 6 3; do FUSEDMOE_WNA16_FOUR_TILES_ABOVE=$v $B bench --precision w4a16 --m $M > "$W/bench_w4a16_t${v}_r1.txt" 2>&1; done
for v in 3 6 12; do FUSEDMOE_WNA16_FOUR_TILES_ABOVE=$v $B bench --precision w4a16 --m $M > "$W/bench_w4a16_t${v}_r2.txt" 2>&1; done
for v in 12 6 3; do FUSEDMOE_WNA16_FOUR_TILES_ABOVE=$v $B bench --precision w8a16 --m $M > "$W/bench_w8a16_t${v}_r1.txt" 2>&1; done
echo "bench $(( $(date +%s) - t0 )) s"
python3 - "$W" <<'PY'
import sys, glob, os, collections, statistics
d = sys.argv[1]
for prec in ("w4a16", "w8a16"):
    t = collections.defaultdict(list)
    for f in glob.glob(f"{d}/bench_{prec}_*_r*.txt"):
        v = os.path.basename(f).split("_")[2]
        for l in open(f):
            p = l.split()
            if len(p) > 8 and p[1].isdigit():
                try: t[(p[0], int(p[1]), v)].append(float(p[3]))
                except ValueError: pass
    print(f"{prec}: shape m above12 above6 above3 | ratios 6/12 3/12")
    for s, m in sorted({(s, m) for s, m, _ in t}):
        a, b, c = (statistics.median(t[(s, m, x)]) for x in ("t12", "t6", "t3"))
        print(f"  {s:20s} {m:5d} {a:9.1f} {b:9.1f} {c:9.1f} | {b / a:6.3f} {c / a:6.3f}")
PY
tar czf "$OUT/call8.tgz" -C "$W" . && rm -rf "$W"

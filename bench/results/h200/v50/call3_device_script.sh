#!/usr/bin/env bash
# v50 call 3: cand (whole-sector int8 copies). w8a16 at the grouped points forced onto the GEMV
# (small_m) against auto, two rounds alternating; a split-K sweep of w8a16 decode.
set -o pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w3"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/rel
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
C=$root/build/carry/cand/fusedmoe; t0=$(date +%s)
P="--precision w8a16 --m 384,512,768,1024,2048"
for r in 1 2; do
  $C bench $P > "$W/bench_auto_r$r.txt" 2>&1
  $C bench $P --path small_m > "$W/bench_smallm_r$r.txt" 2>&1
done
echo "crossover $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
for s in 1,1 2,2 4,4 8,8; do
  $C bench --precision w8a16 --m 1,2,4,8,16 --split-k $s 2>&1 | sed "s/^/split=$s /" >> "$W/splits.txt"
done
$C bench --precision w8a16 --m 1,2,4,8,16 2>&1 | sed "s/^/split=auto /" >> "$W/splits.txt"
echo "done $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
cat "$W/info.txt"
python3 - "$W" <<'PY'
import sys, glob, statistics, collections
W = sys.argv[1]
def load(f, pre=None):
    d = {}
    for l in open(f):
        p = l.split()
        if pre: 
            if not p or not p[0].startswith("split="): continue
            tag = p[0]; p = p[1:]
        if len(p) > 8 and p[1].isdigit():
            d[((tag,) if pre else ()) + (p[0], int(p[1]))] = (float(p[3]), p[2])
    return d
A = [load(f) for f in sorted(glob.glob(f"{W}/bench_auto_r*.txt"))]
S = [load(f) for f in sorted(glob.glob(f"{W}/bench_smallm_r*.txt"))]
for k in A[0]:
    a = statistics.median(x[k][0] for x in A); s = statistics.median(x[k][0] for x in S)
    print(f"xover {k[0]:22s} {k[1]:5d} auto({A[0][k][1]}) {a:8.1f} small_m {s:8.1f} ratio {s / a:.3f}")
sp = load(f"{W}/splits.txt", pre=True)
pts = sorted({k[1:] for k in sp})
for pt in pts:
    row = {k[0][6:]: v[0] for k, v in sp.items() if k[1:] == pt}
    best = min((v, s) for s, v in row.items() if s != "auto")
    print(f"split {pt[0]:22s} {pt[1]:4d} " + " ".join(f"{s}:{v:.1f}" for s, v in sorted(row.items())) + f"  auto/best {row['auto'] / best[0]:.3f} ({best[1]})")
PY
tar czf "$OUT/call3.tgz" -C "$W" . && rm -rf "$W"

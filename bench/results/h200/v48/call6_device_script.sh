#!/usr/bin/env bash
# v48 call 6: `x1` without its switch (= 144a930): the integer crossover again, the GEMVs
# forced (--path small_m) against the planner's path at M = 256-4096, w4a16 (auto / small /
# small / auto) and w8a16 (one round).
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w6"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
B=build/carry/x1; t0=$(date +%s)
M=256,512,1024,2048,4096
for prec in w4a16 w8a16; do
  for r in 1 2; do
    [ $prec = w8a16 ] && [ $r = 2 ] && continue
    for v in $([ $r = 1 ] && echo "auto small_m" || echo "small_m auto"); do
      $B/fusedmoe bench --precision $prec --m $M --path $v > "$W/bench_${prec}_${v/_/}_r$r.txt" 2>&1
    done
  done
done
echo "bench $(( $(date +%s) - t0 )) s"
python3 - "$W" <<'PY'
import sys, glob, os, collections, statistics
d = sys.argv[1]
for prec in ("w4a16", "w8a16"):
    t = collections.defaultdict(list); path = {}
    for f in glob.glob(f"{d}/bench_{prec}_*_r*.txt"):
        v = os.path.basename(f).split("_")[2]
        for l in open(f):
            p = l.split()
            if len(p) > 8 and p[1].isdigit():
                try: t[(p[0], int(p[1]), v)].append(float(p[3]))
                except ValueError: continue
                if v == "auto": path[(p[0], int(p[1]))] = p[2]
    print(f"{prec}: shape m auto(path) small_m ratio")
    for s, m in sorted({(s, m) for s, m, _ in t}):
        a, b = t.get((s, m, "auto")), t.get((s, m, "smallm"))
        if a and b:
            a, b = statistics.median(a), statistics.median(b)
            print(f"  {s:20s} {m:5d} {a:9.1f} {path[(s, m)]:16s} {b:9.1f} {b / a:6.3f}")
PY
tar czf "$OUT/call6.tgz" -C "$W" . && rm -rf "$W"

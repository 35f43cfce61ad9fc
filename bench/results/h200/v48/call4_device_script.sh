#!/usr/bin/env bash
# v48 call 4: `rule` (cand + FUSEDMOE_WNA16_ONE_WAVE_MAX: wna16's one-wave bound on the unsplit
# grid, 1 = cand's rule) at 1 against 2, w4a16 and w8a16 at M = 1-256 (1 / 2 / 2 / 1); and
# Mixtral M = 2048 / 4096 (the grouped path, unchanged code) cand then base, twice.
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w4"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
R=build/carry/rule/fusedmoe; t0=$(date +%s)
M=1,2,4,8,16,32,64,128,256
for prec in w4a16 w8a16; do
  for r in 1 2; do
    for v in $([ $r = 1 ] && echo "1 2" || echo "2 1"); do
      FUSEDMOE_WNA16_ONE_WAVE_MAX=$v $R bench --precision $prec --m $M > "$W/bench_${prec}_ow${v}_r$r.txt" 2>&1
    done
  done
done
echo "bench $(( $(date +%s) - t0 )) s"
for r in 1 2; do
  build/carry/cand/fusedmoe bench --precision w4a16 --shape mixtral_8x7b_tp1 --m 2048,4096 > "$W/big_cand_r$r.txt" 2>&1
  FUSEDMOE_WNA16_SHARED_X=0 build/carry/exp/fusedmoe bench --precision w4a16 --shape mixtral_8x7b_tp1 --m 2048,4096 > "$W/big_base_r$r.txt" 2>&1
done
grep -h "mixtral_8x7b_tp1 " "$W"/big_*.txt | awk '{print $1, $2, $4}'
echo "big $(( $(date +%s) - t0 )) s"
python3 - "$W" <<'PY'
import sys, glob, os, collections, statistics
d = sys.argv[1]
for prec in ("w4a16", "w8a16"):
    t = collections.defaultdict(list); vl = {}
    for f in glob.glob(f"{d}/bench_{prec}_*_r*.txt"):
        v = os.path.basename(f).split("_")[2]
        for l in open(f):
            p = l.split()
            if len(p) > 8 and p[1].isdigit():
                try: t[(p[0], int(p[1]), v)].append(float(p[3])); vl[(p[0], int(p[1]))] = p[8]
                except ValueError: pass
    print(f"{prec}: shape m one-wave<=1 one-wave<=2 ratio vllm")
    for s, m in sorted({(s, m) for s, m, _ in t}):
        a, b = t.get((s, m, "ow1")), t.get((s, m, "ow2"))
        if a and b:
            a, b = statistics.median(a), statistics.median(b)
            print(f"  {s:20s} {m:5d} {a:9.1f} {b:9.1f} {b / a:6.3f} {vl[(s, m)]}")
PY
tar czf "$OUT/call4.tgz" -C "$W" . && rm -rf "$W"

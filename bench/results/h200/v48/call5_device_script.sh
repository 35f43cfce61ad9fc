#!/usr/bin/env bash
# v48 call 5: `x1` = 144a930 (the shared x at four n-tiles, wna16's split rules) with
# FUSEDMOE_WNA16_SHARED_X1=1 also giving the one-tile unsplit GEMVs the CTA's shared x (8
# rows). Integer suites with it on; memcheck / racecheck of a one-tile unsplit layer (Scout
# M = 16); bench w4a16 and w8a16 at M = 1-512, off / on / on / off (off = 144a930).
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w5"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
B=build/carry/x1; t0=$(date +%s)
if [ "${SKIP_TESTS:-0}" != 1 ]; then
FUSEDMOE_WNA16_SHARED_X1=1 timeout 300 $B/fusedmoe_gpu_tests --gtest_filter='Paths/QuantLayer.*/small_m:QuantLayerAuto.*:SmallMSplitK.*' > "$W/ctest.txt" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$W/ctest.txt" | head -20
fi
n=0
for chk in "--shape llama4_scout_tp8 --m 16 --precision w4a16_awq" "--E 8 --H 2944 --I 640 --topk 2 --m 150 --routing skewed --precision w8a16"; do
  n=$((n+1))
  FUSEDMOE_WNA16_SHARED_X1=1 timeout 120 compute-sanitizer --tool memcheck $B/fusedmoe check $chk --path small_m > "$W/memcheck_$n.txt" 2>&1; echo "memcheck $n rc=$? $(grep -h 'ERROR SUMMARY' "$W/memcheck_$n.txt")"
  FUSEDMOE_WNA16_SHARED_X1=1 timeout 120 compute-sanitizer --tool racecheck --racecheck-report hazard $B/fusedmoe check $chk --path small_m > "$W/racecheck_$n.txt" 2>&1; echo "racecheck $n rc=$? $(grep -h 'RACECHECK SUMMARY' "$W/racecheck_$n.txt")"
done
M=1,2,4,8,16,32,64,128,256,512
for prec in w4a16 w8a16; do
  for r in 1 2; do
    for v in $([ $r = 1 ] && echo "0 1" || echo "1 0"); do
      FUSEDMOE_WNA16_SHARED_X1=$v $B/fusedmoe bench --precision $prec --m $M > "$W/bench_${prec}_x${v}_r$r.txt" 2>&1
    done
  done
done
echo "bench $(( $(date +%s) - t0 )) s"
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
                try: t[(p[0], int(p[1]), v)].append(float(p[3])); vl[(p[0], int(p[1]))] = (p[5], p[6], p[7], p[8])
                except ValueError: pass
    print(f"{prec}: shape m off on ratio | floor %roof(off) vllm")
    for s, m in sorted({(s, m) for s, m, _ in t}):
        a, b = t.get((s, m, "x0")), t.get((s, m, "x1"))
        if a and b:
            a, b = statistics.median(a), statistics.median(b)
            print(f"  {s:20s} {m:5d} {a:9.1f} {b:9.1f} {b / a:6.3f} | {' '.join(vl[(s, m)][1:])}")
PY
tar czf "$OUT/call5.tgz" -C "$W" . && rm -rf "$W"

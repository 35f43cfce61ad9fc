#!/usr/bin/env bash
# v48 call 2: `exp` as in call 1 with the corrected test case: the integer small_m suites;
# memcheck, racecheck and synccheck of a shared-x layer (w4a16_awq, four n-tiles, several
# passes); bench w4a16 and w8a16 at M = 64-512 with the planner's split-K against
# --split-k 1,1 (both GEMVs unsplit: the shared x at every four-tile point), auto / 1,1 / 1,1 / auto.
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w2"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
B=build/carry/exp; t0=$(date +%s)
timeout 240 $B/fusedmoe_gpu_tests --gtest_filter='Paths/QuantLayer.*/small_m:QuantLayerAuto.*' > "$W/ctest.txt" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$W/ctest.txt" | head -20
CHK="$B/fusedmoe check --precision w4a16_awq --E 8 --H 2944 --I 640 --topk 2 --m 150 --routing skewed --path small_m"
$CHK > "$W/check.txt" 2>&1; echo "check rc=$? $(tail -1 "$W/check.txt")"
timeout 120 compute-sanitizer --tool memcheck $CHK > "$W/memcheck.txt" 2>&1; echo "memcheck rc=$? $(grep -h 'ERROR SUMMARY' "$W/memcheck.txt")"
timeout 120 compute-sanitizer --tool racecheck --racecheck-report hazard $CHK > "$W/racecheck.txt" 2>&1; echo "racecheck rc=$? $(grep -h 'RACECHECK SUMMARY' "$W/racecheck.txt")"
timeout 120 compute-sanitizer --tool synccheck $CHK > "$W/synccheck.txt" 2>&1; echo "synccheck rc=$? $(grep -h 'ERROR SUMMARY' "$W/synccheck.txt")"
echo "sanitizers $(( $(date +%s) - t0 )) s"
M=64,128,256,512
for prec in w4a16 w8a16; do
  for r in 1 2; do
    [ $prec = w8a16 ] && [ $r = 2 ] && continue
    for v in $([ $r = 1 ] && echo "auto s11" || echo "s11 auto"); do
      extra=""; [ $v = s11 ] && extra="--split-k 1,1"
      $B/fusedmoe bench --precision $prec --m $M $extra > "$W/bench_${prec}_${v}_r$r.txt" 2>&1
    done
  done
done
echo "bench $(( $(date +%s) - t0 )) s"
python3 - "$W" <<'PY'
import sys, glob, os, collections, statistics
d = sys.argv[1]
for prec in ("w4a16", "w8a16"):
    t = collections.defaultdict(list)
    for f in glob.glob(f"{d}/bench_{prec}_*_r*.txt"):
        x = os.path.basename(f).split("_")[2]
        for l in open(f):
            p = l.split()
            if len(p) > 8 and p[1].isdigit():
                try: t[(p[0], int(p[1]), x)].append(float(p[3]))
                except ValueError: pass
    print(f"{prec}: shape m auto split1,1 ratio")
    for s, m in sorted({(s, m) for s, m, _ in t}):
        a, b = t.get((s, m, "auto")), t.get((s, m, "s11"))
        if a and b:
            a, b = statistics.median(a), statistics.median(b)
            print(f"  {s:20s} {m:5d} {a:9.1f} {b:9.1f} {b / a:6.3f}")
PY
tar czf "$OUT/call2.tgz" -C "$W" . && rm -rf "$W"

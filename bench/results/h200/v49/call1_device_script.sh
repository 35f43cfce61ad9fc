#!/usr/bin/env bash
# v49 call 1: `cand` = main 1b4cce0 + wna16_gemv eight n-tiles (64 tokens per pass, scaled weights)
# and the scaled four-tile kernel, switched by FUSEDMOE_WNA16_EIGHT_ABOVE (pairs per active expert
# above which a four-tile unsplit GEMV becomes eight) and FUSEDMOE_WNA16_SCALED4=1.
set -o pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w1"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone; ln -sfn "$root" /tmp/rel
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
B=build/carry/cand/fusedmoe; T=build/carry/cand/fusedmoe_gpu_tests; t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
# Correctness: every four-tile unsplit GEMV as eight tiles, then the scaled four tiles.
FUSEDMOE_WNA16_EIGHT_ABOVE=1 $T --gtest_filter='Paths/QuantLayer.*:QuantLayerAuto.*:SmallMSplitK.*' > "$W/ctest_e1.txt" 2>&1; echo "tests e1 rc=$?" >> "$W/info.txt"
FUSEDMOE_WNA16_SCALED4=1 $T --gtest_filter='Paths/QuantLayer.*:QuantLayerAuto.*:SmallMSplitK.*' > "$W/ctest_s4.txt" 2>&1; echo "tests s4 rc=$?" >> "$W/info.txt"
echo "tests $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
CK="check --precision w4a16_awq --E 8 --H 2944 --I 640 --topk 2 --m 150 --routing skewed --path small_m"
FUSEDMOE_WNA16_EIGHT_ABOVE=1 compute-sanitizer --tool memcheck $B $CK > "$W/memcheck.txt" 2>&1
FUSEDMOE_WNA16_EIGHT_ABOVE=1 compute-sanitizer --tool racecheck $B $CK > "$W/racecheck.txt" 2>&1
FUSEDMOE_WNA16_EIGHT_ABOVE=1 compute-sanitizer --tool synccheck $B $CK > "$W/synccheck.txt" 2>&1
FUSEDMOE_WNA16_EIGHT_ABOVE=1 $B check --precision w8a16_gptq --E 8 --H 2944 --I 640 --topk 2 --m 300 --routing skewed --path small_m > "$W/check_w8.txt" 2>&1
echo "sanitizers $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
M=16,32,64,128,256,512,1024
run() { env $2 $B bench --precision $1 --m $M > "$W/bench_$1_$3.txt" 2>&1; }
run w4a16 X=0 base_r1; run w4a16 FUSEDMOE_WNA16_EIGHT_ABOVE=6 e6_r1; run w4a16 FUSEDMOE_WNA16_SCALED4=1 s4_r1
run w4a16 FUSEDMOE_WNA16_SCALED4=1 s4_r2; run w4a16 FUSEDMOE_WNA16_EIGHT_ABOVE=6 e6_r2; run w4a16 X=0 base_r2
run w8a16 X=0 base_r1; run w8a16 FUSEDMOE_WNA16_EIGHT_ABOVE=6 e6_r1; run w8a16 FUSEDMOE_WNA16_SCALED4=1 s4_r1
echo "bench $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
python3 - "$W" > "$W/summary.txt" <<'PY'
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
    print(f"{prec}: shape m base e6 s4 | e6/base s4/base | path")
    for s, m in sorted({(s, m) for s, m, _ in t}):
        a, b, c = (statistics.median(t[(s, m, x)]) for x in ("base", "e6", "s4"))
        print(f"  {s:20s} {m:5d} {a:9.1f} {b:9.1f} {c:9.1f} | {b / a:6.3f} {c / a:6.3f}")
PY
cat "$W/info.txt"; grep -h "PASSED\|FAILED" "$W"/ctest_*.txt | tail -6; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$W"/*check.txt; tail -3 "$W/check_w8.txt"; cat "$W/summary.txt"
tar czf "$OUT/call1.tgz" -C "$W" . && rm -rf "$W"

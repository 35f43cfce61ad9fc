#!/usr/bin/env bash
# v49 call 2: `cand` = main 1b4cce0 + int8 eight n-tiles (64 tokens per pass, the weights
# dequantized with their scales split hi + lo) above 24 pairs per active expert (the planner's
# kWna16Int8SplitRule); FUSEDMOE_WNA16_EIGHT_ABOVE overrides the bound (1000000: four tiles, main's
# choice; 1: eight wherever four tiles run unsplit).
set -o pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w2"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone; ln -sfn "$root" /tmp/rel
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
B=build/carry/cand/fusedmoe; T=build/carry/cand/fusedmoe_gpu_tests; t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
F='Paths/QuantLayer.*:QuantLayerAuto.*:SmallMSplitK.*'
$T --gtest_filter="$F" > "$W/ctest_rule.txt" 2>&1; echo "tests rule rc=$?" >> "$W/info.txt"
FUSEDMOE_WNA16_EIGHT_ABOVE=1 $T --gtest_filter="$F" > "$W/ctest_e1.txt" 2>&1; echo "tests e1 rc=$?" >> "$W/info.txt"
echo "tests $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
CK="check --precision w8a16_gptq --E 8 --H 2944 --I 640 --topk 2 --m 300 --routing skewed --path small_m"
compute-sanitizer --tool memcheck $B $CK > "$W/memcheck.txt" 2>&1
compute-sanitizer --tool racecheck $B $CK > "$W/racecheck.txt" 2>&1
compute-sanitizer --tool synccheck $B $CK > "$W/synccheck.txt" 2>&1
$B check --precision w8a16_wna16 --shape mixtral_8x7b_tp1 --m 128 > "$W/check_mixtral128.txt" 2>&1
echo "sanitizers $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
M=16,32,64,128,256,512,1024
run() { env $2 $B bench --precision $1 --m $M > "$W/bench_$1_$3.txt" 2>&1; }
run w8a16 FUSEDMOE_WNA16_EIGHT_ABOVE=1000000 base_r1; run w8a16 X=0 cand_r1
run w8a16 X=0 cand_r2; run w8a16 FUSEDMOE_WNA16_EIGHT_ABOVE=1000000 base_r2
run w4a16 X=0 cand_r1
echo "bench $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
python3 - "$W" > "$W/summary.txt" <<'PY'
import sys, glob, os, collections, statistics
d = sys.argv[1]
t = collections.defaultdict(list)
for f in glob.glob(f"{d}/bench_w8a16_*_r*.txt"):
    v = os.path.basename(f).split("_")[2]
    for l in open(f):
        p = l.split()
        if len(p) > 8 and p[1].isdigit():
            try: t[(p[0], int(p[1]), v)].append(float(p[3]))
            except ValueError: pass
print("w8a16: shape m base cand | cand/base")
for s, m in sorted({(s, m) for s, m, _ in t}):
    a, b = (statistics.median(t[(s, m, x)]) for x in ("base", "cand"))
    print(f"  {s:20s} {m:5d} {a:9.1f} {b:9.1f} | {b / a:6.3f}")
PY
cat "$W/info.txt"; grep -h "PASSED\|FAILED" "$W"/ctest_*.txt | tail -8; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$W"/*check.txt; grep -h "result" "$W"/check_*.txt; cat "$W/summary.txt"
tar czf "$OUT/call2.tgz" -C "$W" . && rm -rf "$W"

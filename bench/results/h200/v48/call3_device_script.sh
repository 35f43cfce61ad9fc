#!/usr/bin/env bash
# v48 call 3: `cand` (the shared x always at four n-tiles unsplit, no switch; kWna16SplitRule:
# four n-tiles unsplit from one CTA per SM) against `base` (call 1's exp binary with
# FUSEDMOE_WNA16_SHARED_X=0: main's kernels and planner). The integer suites on every path;
# memcheck / racecheck; bench w4a16 at every M (base / cand / cand / base), w8a16 one round;
# a split-K sweep of cand at M = 16-128 (the one-tile points).
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w3"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
C=build/carry/cand; t0=$(date +%s)
timeout 300 $C/fusedmoe_gpu_tests --gtest_filter='Paths/QuantLayer.*:QuantLayerAuto.*:SmallMSplitK.*' > "$W/ctest.txt" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$W/ctest.txt" | head -20
CHK="$C/fusedmoe check --precision w4a16_awq --E 8 --H 2944 --I 640 --topk 2 --m 150 --routing skewed --path small_m"
timeout 120 compute-sanitizer --tool memcheck $CHK > "$W/memcheck.txt" 2>&1; echo "memcheck rc=$? $(grep -h 'ERROR SUMMARY' "$W/memcheck.txt")"
timeout 120 compute-sanitizer --tool racecheck --racecheck-report hazard $CHK > "$W/racecheck.txt" 2>&1; echo "racecheck rc=$? $(grep -h 'RACECHECK SUMMARY' "$W/racecheck.txt")"
run() {  # variant precision round [extra]
  if [ "$1" = base ]; then FUSEDMOE_WNA16_SHARED_X=0 build/carry/exp/fusedmoe bench --precision $2 ${4:-} > "$W/bench_$2_$1_r$3.txt" 2>&1
  else $C/fusedmoe bench --precision $2 ${4:-} > "$W/bench_$2_$1_r$3.txt" 2>&1; fi
}
run base w4a16 1; run cand w4a16 1; run cand w4a16 2; run base w4a16 2
run base w8a16 1; run cand w8a16 1
echo "bench $(( $(date +%s) - t0 )) s"
for s in 1,1 1,2 2,1 2,2 4,2 8,1 8,2; do
  $C/fusedmoe bench --precision w4a16 --m 16,32,64,128 --split-k $s > "$W/sweep_w4a16_s${s/,/_}.txt" 2>&1
done
$C/fusedmoe bench --precision w4a16 --m 16,32,64,128 > "$W/sweep_w4a16_auto.txt" 2>&1
echo "sweep $(( $(date +%s) - t0 )) s"
python3 - "$W" <<'PY'
import sys, glob, os, collections, statistics
d = sys.argv[1]
def load(f):
    out = {}
    for l in open(f):
        p = l.split()
        if len(p) > 8 and p[1].isdigit():
            try: out[(p[0], int(p[1]))] = (float(p[3]), p[8])
            except ValueError: pass
    return out
for prec in ("w4a16", "w8a16"):
    t = collections.defaultdict(list); vl = {}
    for f in glob.glob(f"{d}/bench_{prec}_*_r*.txt"):
        v = os.path.basename(f).split("_")[2]
        for k, (us, vll) in load(f).items(): t[k + (v,)].append(us); vl[k] = vll
    print(f"{prec}: shape m base cand ratio vllm")
    for s, m in sorted({(s, m) for s, m, _ in t}):
        a, b = t.get((s, m, "base")), t.get((s, m, "cand"))
        if a and b:
            a, b = statistics.median(a), statistics.median(b)
            print(f"  {s:20s} {m:5d} {a:9.1f} {b:9.1f} {b / a:6.3f} {vl[(s, m)]}")
sw = {os.path.basename(f)[12:-4]: load(f) for f in glob.glob(f"{d}/sweep_w4a16_*.txt")}
names = ["auto"] + sorted(k for k in sw if k != "auto")
print("sweep w4a16 (us): shape m " + " ".join(names))
for k in sorted(sw["auto"]):
    print(f"  {k[0]:20s} {k[1]:5d} " + " ".join(f"{sw[n].get(k, (0,))[0]:7.1f}" for n in names))
PY
tar czf "$OUT/call3.tgz" -C "$W" . && rm -rf "$W"

#!/usr/bin/env bash
# v50 call 5: exp = 483c45b + FUSEDMOE_X_INT8_FOUR / _EIGHT overrides of int8's token-tile
# thresholds (experiment, not landed); exp2 = exp + x's shared-ring copies by whole sectors.
# Integer suites and sanitizers on exp2; exp vs exp2 ABBA (w4a16, w8a16, M = 16-1024); ncu of
# the four-tile gate-up on both; int8 thresholds on exp in palindrome order.
set -o pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w5"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/rel
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
A=$root/build/carry/exp/fusedmoe; C=$root/build/carry/exp2/fusedmoe; T=$root/build/carry/exp2/fusedmoe_gpu_tests; t0=$(date +%s)
$T --gtest_filter='Paths/QuantLayer.*:QuantLayerAuto.*:SmallMSplitK.*' > "$W/ctest_int.txt" 2>&1; echo "int suites rc=$? $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
compute-sanitizer --tool memcheck $C check --precision w8a16_gptq --E 8 --H 2944 --I 640 --topk 2 --m 300 --routing skewed --path small_m > "$W/memcheck_w8.txt" 2>&1
compute-sanitizer --tool racecheck $C check --precision w4a16_awq --E 8 --H 2944 --I 640 --topk 2 --m 150 --routing skewed --path small_m > "$W/racecheck_w4.txt" 2>&1
compute-sanitizer --tool synccheck $C check --precision w8a16_gptq --E 8 --H 2944 --I 640 --topk 2 --m 300 --routing skewed --path small_m > "$W/synccheck_w8.txt" 2>&1
echo "sanitizers $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
P="--m 16,32,64,128,256,512,1024"
for pr in w4a16 w8a16; do
  $A bench --precision $pr $P > "$W/bench_${pr}_base_r1.txt" 2>&1
  $C bench --precision $pr $P > "$W/bench_${pr}_cand_r1.txt" 2>&1
  $C bench --precision $pr $P > "$W/bench_${pr}_cand_r2.txt" 2>&1
  $A bench --precision $pr $P > "$W/bench_${pr}_base_r2.txt" 2>&1
done
echo "ab $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
for b in exp exp2; do
  OUT="$W/p" FUSEDMOE_BIN=$root/build/carry/$b/fusedmoe PRECISION=w4a16 DETAIL='gemv' bash scripts/profile.sh mixtral_8x7b_tp1:128 > /dev/null 2>&1
  cp "$W/p/profile.txt" "$W/profile_w4a16_$b.txt"; rm -rf "$W/p"
done
echo "profile $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
XP="--precision w8a16 --m 16,32,64,128,256,512"
for v in base e12 e6 f3 f3 e6 e12 base; do
  r=1; [ -f "$W/x_${v}_r1.txt" ] && r=2
  case $v in
    base) $A bench $XP > "$W/x_${v}_r$r.txt" 2>&1 ;;
    e12) FUSEDMOE_X_INT8_EIGHT=12 $A bench $XP > "$W/x_${v}_r$r.txt" 2>&1 ;;
    e6) FUSEDMOE_X_INT8_EIGHT=6 $A bench $XP > "$W/x_${v}_r$r.txt" 2>&1 ;;
    f3) FUSEDMOE_X_INT8_FOUR=3 $A bench $XP > "$W/x_${v}_r$r.txt" 2>&1 ;;
  esac
done
echo "done $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
cat "$W/info.txt"; grep -h "PASSED\|FAILED" "$W/ctest_int.txt" | tail -5; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|result" "$W"/*check_*.txt
grep -h "us  read\|==\|L2 Cache Throughput\|DRAM Throughput\|lts__t_bytes\|wavefronts_mem_shared\|L1/TEX Cache Throughput" "$W"/profile_w4a16_*.txt
python3 - "$W" <<'PY'
import sys, glob, statistics
W = sys.argv[1]
def load(f):
    d = {}
    for l in open(f):
        p = l.split()
        if len(p) > 8 and p[1].isdigit():
            d[(p[0], int(p[1]))] = (float(p[3]), p[2])
    return d
def ab(pa, pc, tag):
    A = [load(f) for f in sorted(glob.glob(pa))]; C = [load(f) for f in sorted(glob.glob(pc))]
    for k in A[0]:
        a = statistics.median(x[k][0] for x in A); c = statistics.median(x[k][0] for x in C)
        print(f"{tag} {k[0]:22s} {k[1]:5d} {A[0][k][1]:>14s} {a:8.1f} {c:8.1f} ratio {c / a:.3f}")
for pr in ("w4a16", "w8a16"):
    ab(f"{W}/bench_{pr}_base_r*.txt", f"{W}/bench_{pr}_cand_r*.txt", f"x-sector {pr}")
for v in ("e12", "e6", "f3"):
    ab(f"{W}/x_base_r*.txt", f"{W}/x_{v}_r*.txt", f"thr {v}")
PY
tar czf "$OUT/call5.tgz" -C "$W" . && rm -rf "$W"

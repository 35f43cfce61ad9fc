#!/usr/bin/env bash
# v48 call 1: the experiment build `exp` (2aa7847 + wna16_gemv's CTA-shared x for four n-tiles
# at split 1, FUSEDMOE_WNA16_SHARED_X=0 turns it off): the integer small_m suites with it on,
# memcheck and racecheck of a shared-x layer; ncu of the GEMVs at w4a16 Mixtral M = 128 (off /
# on, detail) and Qwen3 M = 512 (off / on); bench w4a16 (off / on / on / off) and w8a16 (off / on).
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w1"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
B=build/carry/exp; t0=$(date +%s)
$B/fusedmoe info > "$W/info.txt" 2>&1; head -1 "$W/info.txt"
timeout 240 $B/fusedmoe_gpu_tests --gtest_filter='Paths/QuantLayer.*/small_m:QuantLayerAuto.*' > "$W/ctest.txt" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$W/ctest.txt" | head -20
CHK="$B/fusedmoe check --precision w4a16 --E 8 --H 2880 --I 704 --topk 2 --m 150 --routing skewed --path small_m"
timeout 120 compute-sanitizer --tool memcheck $CHK > "$W/memcheck.txt" 2>&1; echo "memcheck rc=$? $(grep -h 'ERROR SUMMARY' "$W/memcheck.txt")"
timeout 120 compute-sanitizer --tool racecheck --racecheck-report hazard $CHK > "$W/racecheck.txt" 2>&1; echo "racecheck rc=$? $(grep -h 'RACECHECK SUMMARY' "$W/racecheck.txt")"
timeout 120 compute-sanitizer --tool synccheck $CHK > "$W/synccheck.txt" 2>&1; echo "synccheck rc=$? $(grep -h 'ERROR SUMMARY' "$W/synccheck.txt")"
echo "sanitizers $(( $(date +%s) - t0 )) s"
for x in 0 1; do
  OUT="$W/p" FUSEDMOE_WNA16_SHARED_X=$x FUSEDMOE_BIN=$B/fusedmoe PRECISION=w4a16 DETAIL=gemv bash scripts/profile.sh mixtral_8x7b_tp1:128 > /dev/null 2>&1
  cp "$W/p/profile.txt" "$W/profile_mixtral128_x$x.txt"; rm -rf "$W/p"
  OUT="$W/p" FUSEDMOE_WNA16_SHARED_X=$x FUSEDMOE_BIN=$B/fusedmoe PRECISION=w4a16 bash scripts/profile.sh qwen3_30b_a3b_tp1:512 > /dev/null 2>&1
  cp "$W/p/profile.txt" "$W/profile_qwen3_512_x$x.txt"; rm -rf "$W/p"
  echo "ncu x$x $(( $(date +%s) - t0 )) s"
done
M=16,32,64,128,256,512,1024
for r in 1 2; do
  for x in $([ $r = 1 ] && echo "0 1" || echo "1 0"); do
    FUSEDMOE_WNA16_SHARED_X=$x $B/fusedmoe bench --precision w4a16 --m $M > "$W/bench_w4a16_x${x}_r$r.txt" 2>&1
  done
done
for x in 0 1; do FUSEDMOE_WNA16_SHARED_X=$x $B/fusedmoe bench --precision w8a16 --m $M > "$W/bench_w8a16_x${x}_r1.txt" 2>&1; done
echo "bench $(( $(date +%s) - t0 )) s"
for f in "$W"/profile_*.txt; do echo "== $f"; grep -E "gemv.*us  read|sum of kernels" "$f"; done
python3 - "$W" <<'PY'
import sys, glob, os, collections, statistics
d = sys.argv[1]
for prec in ("w4a16", "w8a16"):
    t = collections.defaultdict(list)
    for f in glob.glob(f"{d}/bench_{prec}_x*_r*.txt"):
        x = os.path.basename(f).split("_")[2]
        for l in open(f):
            p = l.split()
            if len(p) > 8 and p[1].isdigit():
                try: t[(p[0], int(p[1]), x)].append(float(p[3]))
                except ValueError: pass
    keys = sorted({(s, m) for s, m, _ in t})
    print(f"{prec}: shape m off on ratio")
    for s, m in keys:
        a, b = t.get((s, m, "x0")), t.get((s, m, "x1"))
        if a and b:
            a, b = statistics.median(a), statistics.median(b)
            print(f"  {s:20s} {m:5d} {a:9.1f} {b:9.1f} {b / a:6.3f}")
PY
tar czf "$OUT/call1.tgz" -C "$W" . && rm -rf "$W"

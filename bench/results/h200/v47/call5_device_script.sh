#!/usr/bin/env bash
# v47 call 5: the final commit's CI release build (`final`): the GPU test suite, memcheck of a
# grouped FP8 layer with x's quantizer under align and of a bf16 layer launching its GEMMs
# early, and the bench of every precision at every M, one round (the standings). Then a
# power reading: call 1's experiment build (`exp`) at FUSEDMOE_GEMM_PDL 0 and 6 (GEMM2 waiting
# under GEMM1, which lost up to 4.6%), Mixtral and Scout bf16 M = 4096, one second per point,
# nvidia-smi sampling power and SM clock every 50 ms.
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w5"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
B=build/carry/final; t0=$(date +%s)
$B/fusedmoe info > "$W/info.txt" 2>&1
timeout 330 $B/fusedmoe_gpu_tests > "$W/ctest.txt" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]|tests? ran" "$W/ctest.txt" | head -20
i=0
for args in "--precision fp8_tensor --E 16 --H 512 --I 256 --topk 4 --m 300" "--precision bf16 --E 64 --H 1024 --I 256 --topk 8 --m 200 --routing skewed"; do
  i=$((i+1))
  /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 1 $B/fusedmoe check $args > "$W/memcheck_$i.txt" 2>&1
  echo "memcheck $i ($args) rc=$? $(( $(date +%s) - t0 )) s"; grep -E "SUMMARY|result" "$W/memcheck_$i.txt" | head -2
done
for prec in bf16 fp8_channel fp8_tensor fp8_block w4a16; do
  [ $(( $(date +%s) - t0 )) -gt 520 ] && { echo "time: stop before $prec"; break; }
  $B/fusedmoe bench --precision $prec > "$W/bench_${prec}_final_r1.txt" 2>&1
  echo "$prec rc=$? $(( $(date +%s) - t0 )) s"
done
for v in 0 6 6 0; do
  for shape in mixtral_8x7b_tp1 llama4_scout_tp8; do
    n=1; [ -f "$W/power_${shape}_v${v}_r1.csv" ] && n=2
    nvidia-smi --query-gpu=timestamp,power.draw,clocks.sm,utilization.gpu --format=csv,noheader,nounits -lms 50 > "$W/power_${shape}_v${v}_r$n.csv" 2>&1 &
    smi=$!
    FUSEDMOE_GEMM_PDL=$v build/carry/exp/fusedmoe bench --precision bf16 --shape $shape --m 4096 --seconds 1 > "$W/powerbench_${shape}_v${v}_r$n.txt" 2>&1
    kill $smi; wait $smi 2>/dev/null
    echo "power $shape v$v r$n $(( $(date +%s) - t0 )) s $(grep "^$shape" "$W/powerbench_${shape}_v${v}_r$n.txt" | awk '{print $4, $(NF-1)}')"
  done
done
python3 - "$W" <<'PY' | tee "$W/power_summary.txt"
import sys, glob, statistics
for f in sorted(glob.glob(sys.argv[1] + "/power_*.csv")):
    rows = []
    for line in open(f):
        p = [x.strip() for x in line.split(",")]
        try: rows.append((float(p[1]), float(p[2]), float(p[3])))
        except (ValueError, IndexError): pass
    busy = [r for r in rows if r[2] >= 90]
    if not busy: print(f.split("/")[-1], "no busy samples", len(rows)); continue
    q = lambda xs: statistics.quantiles(xs, n=10) if len(xs) > 1 else xs * 9
    pw, ck = q([r[0] for r in busy]), q([r[1] for r in busy])
    print(f.split("/")[-1], f"busy {len(busy)} of {len(rows)}: power p10/p50/p90 {pw[0]:.0f}/{pw[4]:.0f}/{pw[8]:.0f} W, SM clock p10/p50/p90 {ck[0]:.0f}/{ck[4]:.0f}/{ck[8]:.0f} MHz")
PY
tar czf "$OUT/call5.tgz" -C "$W" . && rm -rf "$W"

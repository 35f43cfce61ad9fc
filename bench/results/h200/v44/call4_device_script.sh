#!/usr/bin/env bash
# v44 call 4: the landed code (CI's release build of the final code commit, carried): FP8 GPU
# tests, memcheck of gathering layers, one round of the FP8 bench at every M.
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; mkdir -p "$OUT"; W="$OUT/w"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
B=build/carry/fusedmoe; T=build/carry/fusedmoe_gpu_tests
t0=$(date +%s)
$B info > "$W/info.txt" 2>&1; head -1 "$W/info.txt"
timeout 300 $T --gtest_filter='Fp8LayerAuto.*:Fp8Quantize.*:Paths/Fp8Layer.*' > "$W/ctest.txt" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$W/ctest.txt" | head -12
i=0
for args in "--precision fp8_channel --E 64 --H 640 --I 256 --topk 8 --m 700" "--precision fp8_tensor --E 16 --H 4096 --I 256 --topk 8 --m 60" "--precision fp8_channel --E 8 --H 4096 --I 512 --topk 2 --m 40"; do
  i=$((i+1))
  /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 1 $B check $args > "$W/memcheck_$i.txt" 2>&1
  echo "memcheck $i ($args) rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ERROR SUMMARY|result|path" "$W/memcheck_$i.txt" | head -3
done
for prec in fp8_channel fp8_tensor; do
  $B bench --precision $prec > "$W/bench_$prec.txt" 2>&1
  echo "bench $prec rc=$? $(( $(date +%s) - t0 )) s"
done
for prec in fp8_channel fp8_tensor; do echo "== $prec"; sed -n '2p' "$W/bench_$prec.txt"; awk '$2 ~ /^(1|4|16|64|256|1024|4096)$/ {print $1, $2, $3, $4, $9, $10}' "$W/bench_$prec.txt"; done
tar czf "$OUT/call4.tgz" -C "$W" . && rm -rf "$W"

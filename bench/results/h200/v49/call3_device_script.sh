#!/usr/bin/env bash
# v49 call 3: c3ee90a's CI release build (the final code): the whole GPU suite, a memcheck of an
# int8 eight-tile bench point, and w8a16 / w4a16 at every bench point (one round).
set -o pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w3"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
B=build/carry/final/fusedmoe; T=build/carry/final/fusedmoe_gpu_tests; t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
$T > "$W/ctest.txt" 2>&1; echo "gpu suite rc=$? $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
compute-sanitizer --tool memcheck $B check --precision w8a16_gptq --shape qwen2_57b_a14b_tp4 --m 256 > "$W/memcheck.txt" 2>&1
$B bench --precision w8a16 > "$W/bench_w8a16_final_r1.txt" 2>&1
$B bench --precision w4a16 > "$W/bench_w4a16_final_r1.txt" 2>&1
echo "done $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
cat "$W/info.txt"; grep -h "PASSED\|FAILED" "$W/ctest.txt" | tail -5; grep -h "ERROR SUMMARY\|result" "$W/memcheck.txt"
awk 'NF > 8 && $2 ~ /^[0-9]+$/ {print FILENAME, $1, $2, $3, $4, $9, $10}' "$W"/bench_*.txt | sed "s|$W/bench_||"
tar czf "$OUT/call3.tgz" -C "$W" . && rm -rf "$W"

#!/usr/bin/env bash
# v48 call 7: `final` = 6897d07's CI release build (the landed kernel and rules): the whole GPU
# suite; memcheck of an int4 layer the new crossover puts on the GEMV (Qwen3 M = 1024, 64 rows
# per expert); bench w4a16 and w8a16 at every M, one round.
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w7"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
B=build/carry/final; t0=$(date +%s)
$B/fusedmoe info > "$W/info.txt" 2>&1; head -1 "$W/info.txt"
timeout 420 $B/fusedmoe_gpu_tests > "$W/ctest.txt" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$W/ctest.txt" | head -20
timeout 120 compute-sanitizer --tool memcheck $B/fusedmoe check --shape qwen3_30b_a3b_tp1 --m 1024 --precision w4a16_awq > "$W/memcheck.txt" 2>&1
echo "memcheck rc=$? $(grep -h 'ERROR SUMMARY' "$W/memcheck.txt") $(grep -h 'path' "$W/memcheck.txt" | head -1)"
for prec in w4a16 w8a16; do $B/fusedmoe bench --precision $prec > "$W/bench_${prec}_final_r1.txt" 2>&1; done
echo "bench $(( $(date +%s) - t0 )) s"
python3 - "$W" <<'PY'
import sys
d = sys.argv[1]
for prec in ("w4a16", "w8a16"):
    n = ahead = 0
    for l in open(f"{d}/bench_{prec}_final_r1.txt"):
        p = l.split()
        if len(p) > 8 and p[1].isdigit():
            print(f"  {prec} {p[0]:20s} {p[1]:5s} {p[2]:16s} {p[3]:>9s} floor {p[6]:>8s} {p[7]:>6s} vllm {p[8]}")
            if p[8] != "-":
                n += 1; ahead += float(p[3]) < float(p[8])
    if n: print(f"{prec}: faster than vLLM at {ahead} of {n}")
PY
tar czf "$OUT/call7.tgz" -C "$W" . && rm -rf "$W"

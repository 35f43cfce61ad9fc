#!/usr/bin/env bash
# v50 call 6: 2ae75c7's CI release build (the final code): the whole GPU suite, memcheck of an
# int8 point moved onto the GEMV, w8a16 / w4a16 / bf16 at every bench point (one round), ncu of
# the int8 dequant path at Mixtral M = 1024.
set -o pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w6"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
B=$root/build/carry/final/fusedmoe; T=$root/build/carry/final/fusedmoe_gpu_tests; t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
$T > "$W/ctest.txt" 2>&1; echo "gpu suite rc=$? $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
compute-sanitizer --tool memcheck $B check --precision w8a16_gptq --shape qwen3_30b_a3b_tp1 --m 1024 > "$W/memcheck.txt" 2>&1
for pr in w8a16 w4a16 bf16; do $B bench --precision $pr > "$W/bench_${pr}_final_r1.txt" 2>&1; done
echo "benches $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
OUT="$W/p" FUSEDMOE_BIN=$B PRECISION=w8a16 DETAIL='dequant' bash scripts/profile.sh mixtral_8x7b_tp1:1024 > /dev/null 2>&1
cp "$W/p/profile.txt" "$W/profile_w8a16_dequant.txt"; rm -rf "$W/p"
echo "done $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
cat "$W/info.txt"; grep -h "PASSED\|FAILED" "$W/ctest.txt" | tail -5; grep -h "ERROR SUMMARY\|result" "$W/memcheck.txt"
grep -h "us  read\|L2 Cache Throughput\|DRAM Throughput\|lts__t_bytes\|L2 Hit" "$W/profile_w8a16_dequant.txt"
python3 - "$W" <<'PY'
import sys
W = sys.argv[1]
def load(f):
    d = {}
    for l in open(f):
        p = l.split()
        if len(p) > 8 and p[1].isdigit(): d[(p[0], int(p[1]))] = (float(p[3]), p[2], p[6], p[8])
    return d
F = {p: load(f"{W}/bench_{p}_final_r1.txt") for p in ("w8a16", "w4a16", "bf16")}
for k in F["bf16"]:
    b, w8, w4 = F["bf16"][k], F["w8a16"][k], F["w4a16"][k]
    print(f"{k[0]:22s} {k[1]:5d} bf16 {b[0]:8.1f} w8a16 {w8[0]:8.1f} {w8[2]:>6s} {w8[1]:>14s} w4a16 {w4[0]:8.1f} {w4[2]:>6s} vllm {w4[3]:>8s}")
PY
tar czf "$OUT/call6.tgz" -C "$W" . && rm -rf "$W"
